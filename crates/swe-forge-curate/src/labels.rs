//! Human difficulty labels from a file: JSON lines with `instance_id` and `label` (what
//! scripts/difficulty-calibration/msb_labels.py writes; other keys are ignored, a null label means
//! "not answered"), or lines of `instance_id<TAB or comma>label`. A label is `easy`, `medium`,
//! `hard`, or a time-to-fix answer (`<15m`, `15m-1h`, `1h-4h`, `>4h`).

use std::collections::BTreeMap;
use std::path::Path;

use swe_forge_core::{DifficultyLabel, TimeToFix};

use crate::CurateError;

/// One labelled instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanLabel {
    /// The label; None when the labeller gave no answer.
    pub label: Option<DifficultyLabel>,
    /// Language, when the file says (used to break agreement down per language).
    pub lang: Option<String>,
    /// A second labeller's answer, when the file has one (`labels[1]`).
    pub second: Option<DifficultyLabel>,
}

/// Parses a label name.
pub fn parse_label(s: &str) -> Option<DifficultyLabel> {
    match s.trim().to_ascii_lowercase().as_str() {
        "easy" => Some(DifficultyLabel::Easy),
        "medium" => Some(DifficultyLabel::Medium),
        "hard" => Some(DifficultyLabel::Hard),
        other => TimeToFix::parse(other).map(TimeToFix::difficulty),
    }
}

/// Reads a labels file into instance id -> label.
pub fn read_labels(path: &Path) -> Result<BTreeMap<String, HumanLabel>, CurateError> {
    let file = std::fs::File::open(path).map_err(CurateError::io(path))?;
    let mut text = String::new();
    for line in swe_forge_core::bounded_lines(std::io::BufReader::new(file), swe_forge_core::MAX_LINE) {
        text.push_str(&line.map_err(CurateError::io(path))?);
        text.push('\n');
    }
    parse_labels(&text).map_err(|(line, message)| CurateError::Labels { path: path.to_owned(), line, message })
}

pub(crate) fn parse_labels(text: &str) -> Result<BTreeMap<String, HumanLabel>, (usize, String)> {
    let mut out = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |m: String| (i + 1, m);
        let (id, label, lang, second) = if line.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            let id = v.get("instance_id").and_then(|x| x.as_str()).unwrap_or_default().to_owned();
            let text_of = |x: Option<&serde_json::Value>| x.and_then(|x| x.as_str()).map(str::to_owned);
            let label = text_of(v.get("label").or_else(|| v.get("difficulty")));
            let second = v.get("labels").and_then(|l| l.get(1)).and_then(|x| x.as_str()).and_then(parse_label);
            (id, label, text_of(v.get("lang")), second)
        } else {
            let mut parts = line.split(['\t', ',']).map(str::trim);
            let id = parts.next().unwrap_or_default().to_owned();
            let label = parts.next().map(str::to_owned);
            if i == 0 && matches!(label.as_deref(), Some("label" | "difficulty")) {
                continue;
            }
            (id, label, None, None)
        };
        if id.is_empty() {
            return Err(bad("no instance id".into()));
        }
        let label = match label.as_deref().filter(|l| !l.is_empty()) {
            None => None,
            Some(l) => Some(parse_label(l).ok_or_else(|| bad(format!("unknown label {l:?} (easy, medium, hard)")))?),
        };
        out.insert(id, HumanLabel { label, lang, second });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_and_delimited_lines() {
        let text = "{\"instance_id\": \"cli__cli-1\", \"lang\": \"go\", \"label\": \"easy\", \"labels\": [\"easy\", \"hard\"]}\n\
                    {\"instance_id\": \"cli__cli-2\", \"label\": null}\n\n# a comment\n\
                    a__b-3\thard\na__b-4, <15m\n";
        let got = parse_labels(text).unwrap();
        assert_eq!(
            got["cli__cli-1"],
            HumanLabel {
                label: Some(DifficultyLabel::Easy),
                lang: Some("go".into()),
                second: Some(DifficultyLabel::Hard)
            }
        );
        assert_eq!(got["cli__cli-2"].label, None);
        assert_eq!(got["a__b-3"].label, Some(DifficultyLabel::Hard));
        assert_eq!(got["a__b-4"].label, Some(DifficultyLabel::Easy));
        assert_eq!(parse_labels("id,label\nx__y-1,medium\n").unwrap()["x__y-1"].label, Some(DifficultyLabel::Medium));
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(parse_labels("a__b-1\thard\na__b-2\tvery hard\n").unwrap_err().0, 2);
        assert_eq!(parse_labels("{not json\n").unwrap_err().0, 1);
        assert!(parse_labels("{\"label\": \"easy\"}\n").unwrap_err().1.contains("no instance id"));
    }
}
