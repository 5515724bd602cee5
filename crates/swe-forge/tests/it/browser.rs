//! A headless Chromium driven over the DevTools protocol through `--remote-debugging-pipe`
//! (JSON messages ended by NUL on file descriptors 3 and 4), so no WebSocket client is needed.
//! Chromium must be installed (`apt-get install chromium`; `.ci/run` does it); set
//! SWE_FORGE_CHROMIUM to use another binary.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub struct Browser {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: u64,
    session: String,
}

impl Browser {
    /// Starts Chromium with a fresh profile in `profile` and opens one blank page.
    pub fn launch(profile: &Path) -> Browser {
        let binary = std::env::var("SWE_FORGE_CHROMIUM").unwrap_or_else(|_| "chromium".into());
        let mut child = Command::new("bash")
            // fd 3: commands to Chromium (our pipe); fd 4: its answers (our pipe).
            .args(["-c", "exec \"$0\" \"$@\" 3<&0 4>&1 0</dev/null 1>/dev/null"])
            .arg(&binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {binary}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            while reader.read_until(0, &mut buf).is_ok_and(|n| n > 0) {
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                if let Ok(v) = serde_json::from_slice::<Value>(&buf)
                    && tx.send(v).is_err()
                {
                    break;
                }
                buf.clear();
            }
        });
        let mut b = Browser { child, stdin, messages, next_id: 0, session: String::new() };
        let installed = b.call_browser("Browser.getVersion", json!({}));
        assert!(
            installed.get("product").is_some(),
            "{binary} does not answer the DevTools protocol (is Chromium installed? apt-get install chromium)"
        );
        let target = b.call_browser("Target.createTarget", json!({ "url": "about:blank" }));
        let attached =
            b.call_browser("Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }));
        b.session = attached["sessionId"].as_str().unwrap().to_owned();
        b.call("Page.enable", json!({}));
        b.call("Runtime.enable", json!({}));
        b
    }

    fn send(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.stdin.write_all(&bytes).unwrap();
        self.stdin.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(v) if v["id"].as_u64() == Some(id) => {
                    assert!(v.get("error").is_none(), "{method}: {}", v["error"]);
                    return v["result"].clone();
                }
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no answer from Chromium in 60 s"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: Chromium exited"),
            }
        }
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    /// A protocol call on the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let s = self.session.clone();
        self.send(method, params, Some(s))
    }

    /// Evaluates a JavaScript expression in the page (promises awaited) and returns its value.
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self
            .call("Runtime.evaluate", json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }));
        assert!(r.get("exceptionDetails").is_none(), "{expression}: {}", r["exceptionDetails"]);
        r["result"]["value"].clone()
    }

    /// Polls `expression` until it is truthy; returns its value.
    pub fn wait_for(&mut self, expression: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self.call(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            );
            let v = r["result"]["value"].clone();
            let truthy = !matches!(v, Value::Null | Value::Bool(false)) && v != json!("") && v != json!(0);
            if r.get("exceptionDetails").is_none() && truthy {
                return v;
            }
            if Instant::now() >= deadline {
                let page = self.eval("location.hash + '\\n' + document.body.innerText.slice(0, 600)");
                panic!("timed out waiting for {expression} (last: {v}); page:\n{}", page.as_str().unwrap_or_default());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
    }

    pub fn reload(&mut self) {
        self.eval("document.body.dataset.ready = 'stale'");
        self.call("Page.reload", json!({ "ignoreCache": true }));
    }

    /// Presses one key (a printable character, `Escape`, `Enter`, `Tab`, `ArrowDown`, `ArrowUp`).
    pub fn key(&mut self, key: &str) {
        let (code, text, vk) = match key {
            "Escape" => ("Escape".to_owned(), "", 27),
            "Enter" => ("Enter".to_owned(), "\r", 13),
            "Tab" => ("Tab".to_owned(), "", 9),
            "ArrowDown" => ("ArrowDown".to_owned(), "", 40),
            "ArrowUp" => ("ArrowUp".to_owned(), "", 38),
            k => {
                let c = k.chars().next().unwrap();
                let code =
                    if c.is_ascii_digit() { format!("Digit{c}") } else { format!("Key{}", c.to_ascii_uppercase()) };
                (code, k, c.to_ascii_uppercase() as i64)
            }
        };
        let mut down = json!({ "type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk });
        if !text.is_empty() {
            down["text"] = json!(text);
        }
        self.call("Input.dispatchKeyEvent", down);
        self.call(
            "Input.dispatchKeyEvent",
            json!({ "type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk }),
        );
    }

    /// Makes the page's viewport `width` x `height` CSS pixels.
    pub fn viewport(&mut self, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        );
    }

    /// A PNG of the viewport, written to `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let png = base64_decode(shot["data"].as_str().expect("no screenshot data"));
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::write(path, png).unwrap();
    }

    /// Types text into the focused element.
    pub fn type_text(&mut self, text: &str) {
        self.call("Input.insertText", json!({ "text": text }));
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (the DevTools protocol's binary data).
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = text.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= u32::from(value(c)) << (18 - 6 * i);
        }
        out.extend(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}
