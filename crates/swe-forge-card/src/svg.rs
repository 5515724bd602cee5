//! Small SVG charts written by hand (no plotting crate): horizontal bars, and vertical bars
//! stacked by series. Every chart carries its whole title (wrapped, never cut), an axis with round
//! ticks (steps of 1, 2 or 5 times a power of ten), gridlines and axis titles; the plot starts
//! below the title with room for the value written over the tallest bar. Text widths are estimated
//! from character counts (there are no font metrics here), generously. Text is escaped; sizes
//! depend only on the data, so the files diff well.

use std::fmt::Write as _;

/// Colours of the series, in order.
pub(crate) const PALETTE: [&str; 6] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948"];

const FONT: &str = "font-family=\"system-ui, sans-serif\" font-size=\"12\"";
/// Height of the 12 px text above its baseline (with some room).
const TEXT_H: usize = 12;
/// Estimated advance of one character of 12 px text.
const CHAR_W: f64 = 7.0;
/// Estimated advance of one character of the 14 px bold title.
const TITLE_CHAR_W: f64 = 8.6;
const TITLE_LINE_H: usize = 18;
/// Baseline of the title's first line.
const TITLE_Y: usize = 20;
const MARGIN: usize = 10;
/// A title wraps at the chart's width, but never at fewer characters than this.
const TITLE_MIN_CHARS: usize = 48;
/// Longest category or row label, in characters; longer ones end with `…`.
const LABEL_CHARS: usize = 40;
const GRID: &str = "#e5e5e5";
const AXIS: &str = "#999";

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Axis ticks from 0 to at least `max`: at most 6 of them, evenly spaced by 1, 2 or 5 times a
/// power of ten. `max` 0 gives `[0, 1]`.
pub(crate) fn nice_ticks(max: u64) -> Vec<u64> {
    const MOST_STEPS: u64 = 5;
    let max = max.max(1);
    let mut magnitude = 1u64;
    loop {
        for m in [1u64, 2, 5] {
            let step = m.saturating_mul(magnitude);
            let steps = max.div_ceil(step);
            if steps <= MOST_STEPS {
                return (0..=steps).map(|i| i * step).collect();
            }
        }
        magnitude = magnitude.saturating_mul(10);
    }
}

/// One bar per row, in the order given; the value is written at the bar's end, the axis below.
pub(crate) fn horizontal_bars(title: &str, x_title: &str, rows: &[(String, u64)]) -> String {
    let labels: Vec<String> = rows.iter().map(|r| label(&r.0)).collect();
    let label_w = MARGIN + text_w(labels.iter().map(|l| l.chars().count()).max().unwrap_or(0)) + 6;
    let bar_w = 360usize;
    let row_h = 20usize;
    let ticks = nice_ticks(rows.iter().map(|r| r.1).max().unwrap_or(0));
    let top = *ticks.last().unwrap_or(&1) as f64;
    let value_room = text_w(top.to_string().len()) + 8;
    let content_w = label_w + bar_w + value_room + MARGIN;
    let head = Title::new(title, content_w);
    let width = content_w.max(head.width());
    let rows_top = head.bottom + 10;
    let plot_bottom = rows_top + row_h * rows.len().max(1);
    let x_of = |v: f64| label_w as f64 + v / top * bar_w as f64;
    let height = plot_bottom + 20 + if x_title.is_empty() { 0 } else { 18 } + MARGIN;
    let mut s = head.svg(width, height);
    for t in &ticks {
        let x = x_of(*t as f64);
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{rows_top}\" x2=\"{x:.1}\" y2=\"{plot_bottom}\" stroke=\"{}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" {FONT}>{t}</text>",
            if *t == 0 { AXIS } else { GRID },
            plot_bottom + 16,
        );
    }
    if !x_title.is_empty() {
        let _ = writeln!(
            s,
            "<text class=\"axis-title\" x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" {FONT}>{}</text>",
            x_of(top / 2.0),
            plot_bottom + 34,
            escape(x_title)
        );
    }
    for (i, ((full, value), label)) in rows.iter().zip(&labels).enumerate() {
        let y = rows_top + i * row_h;
        let w = x_of(*value as f64) - label_w as f64;
        let w = if *value > 0 { w.max(1.0) } else { 0.0 };
        let _ = writeln!(
            s,
            "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\" {FONT}>{}</text>\
             <rect x=\"{label_w}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" fill=\"{}\"><title>{}: {value}</title></rect>\
             <text class=\"value\" x=\"{:.1}\" y=\"{}\" {FONT}>{value}</text>",
            label_w - 6,
            y + 14,
            escape(label),
            y + 3,
            row_h - 6,
            PALETTE[0],
            escape(full),
            label_w as f64 + w + 4.0,
            y + 14,
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Vertical bars, one per category, stacked by series (`series[k].1[i]` is series k's count in
/// category i), the total written over each bar, with a legend when there is more than one series.
pub(crate) fn stacked_columns(
    title: &str,
    x_title: &str,
    y_title: &str,
    categories: &[String],
    series: &[(String, Vec<u64>)],
) -> String {
    let col_w = 44usize;
    let bar_w = col_w - 12;
    let plot_h = 200usize;
    let totals: Vec<u64> =
        (0..categories.len()).map(|i| series.iter().map(|s| s.1.get(i).copied().unwrap_or(0)).sum()).collect();
    let ticks = nice_ticks(totals.iter().copied().max().unwrap_or(0));
    let top = *ticks.last().unwrap_or(&1) as f64;
    let left = MARGIN + 16 + text_w(top.to_string().len()) + 8;
    let plot_right = left + col_w * categories.len().max(1);
    let labels: Vec<String> = categories.iter().map(|c| label(c)).collect();
    // Category labels are turned 45°: each reaches as far right (and down) as it is long / √2.
    let slant = |l: &String| (text_w(l.chars().count()) as f64 * std::f64::consts::FRAC_1_SQRT_2).ceil() as usize;
    let center = |i: usize| left + i * col_w + 6 + bar_w / 2;
    let labels_right = labels.iter().enumerate().map(|(i, l)| center(i) + slant(l)).max().unwrap_or(0);
    let legend_w = if series.len() > 1 {
        20 + 18 + text_w(series.iter().map(|s| s.0.chars().count()).max().unwrap_or(0))
    } else {
        0
    };
    let content_w = (plot_right + legend_w).max(labels_right) + MARGIN;
    let head = Title::new(title, content_w);
    let width = content_w.max(head.width());
    // Room between the title and the plot for the total written over the tallest bar.
    let plot_top = head.bottom + 8 + TEXT_H + 4;
    let base = plot_top + plot_h;
    let labels_bottom = base + 14 + labels.iter().map(slant).max().unwrap_or(0);
    let height = labels_bottom + if x_title.is_empty() { 0 } else { 22 } + MARGIN;
    let y_of = |v: f64| base as f64 - v / top * plot_h as f64;

    let mut s = head.svg(width, height);
    grid_lines(&mut s, &ticks, (left, plot_right), y_of);
    let _ = writeln!(
        s,
        "<text class=\"axis-title\" transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\" {FONT}>{}</text>",
        MARGIN + 12,
        plot_top + plot_h / 2,
        escape(y_title)
    );
    if !x_title.is_empty() {
        let _ = writeln!(
            s,
            "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" {FONT}>{}</text>",
            (left + plot_right) / 2,
            labels_bottom + 16,
            escape(x_title)
        );
    }
    for (i, cat) in categories.iter().enumerate() {
        let x = left + i * col_w + 6;
        let mut y = base as f64;
        for (k, (name, values)) in series.iter().enumerate() {
            let v = values.get(i).copied().unwrap_or(0);
            if v == 0 {
                continue;
            }
            let h = v as f64 / top * plot_h as f64;
            y -= h;
            let _ = writeln!(
                s,
                "<rect x=\"{x}\" y=\"{y:.1}\" width=\"{bar_w}\" height=\"{h:.1}\" fill=\"{}\"><title>{} {}: {v}</title></rect>",
                PALETTE[k % PALETTE.len()],
                escape(cat),
                escape(name)
            );
        }
        let cx = center(i);
        let _ = writeln!(
            s,
            "<text class=\"value\" x=\"{cx}\" y=\"{:.1}\" text-anchor=\"middle\" {FONT}>{}</text>\
             <text class=\"label\" transform=\"translate({cx},{}) rotate(45)\" {FONT}>{}</text>",
            y - 4.0,
            totals[i],
            base + 14,
            escape(&labels[i])
        );
    }
    if series.len() > 1 {
        legend(&mut s, plot_right + 20, plot_top, series);
    }
    s.push_str("</svg>\n");
    s
}

/// One horizontal line per tick from `left` to `right` (the axis at 0 darker than the grid), its
/// value written left of it; `y_of` places a value.
fn grid_lines(s: &mut String, ticks: &[u64], (left, right): (usize, usize), y_of: impl Fn(f64) -> f64) {
    for t in ticks {
        let y = y_of(*t as f64);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{right}\" y2=\"{y:.1}\" stroke=\"{}\"/>\
             <text class=\"tick\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" {FONT}>{t}</text>",
            if *t == 0 { AXIS } else { GRID },
            left - 6,
            y + 4.0,
        );
    }
}

/// The legend from (`lx`, `top`) down: one colour swatch and name per series.
fn legend(s: &mut String, lx: usize, top: usize, series: &[(String, Vec<u64>)]) {
    for (k, (name, _)) in series.iter().enumerate() {
        let ly = top + k * 18;
        let _ = writeln!(
            s,
            "<rect x=\"{lx}\" y=\"{ly}\" width=\"12\" height=\"12\" fill=\"{}\"/><text class=\"legend\" x=\"{}\" y=\"{}\" {FONT}>{}</text>",
            PALETTE[k % PALETTE.len()],
            lx + 18,
            ly + 11,
            escape(name)
        );
    }
}

/// A chart's title, wrapped into lines.
struct Title {
    lines: Vec<String>,
    /// The first y below the last line's descenders.
    bottom: usize,
}

impl Title {
    /// `text` wrapped at words to fit `chart_w` (a word longer than a line stands alone).
    fn new(text: &str, chart_w: usize) -> Title {
        let most = ((chart_w.saturating_sub(2 * MARGIN) as f64 / TITLE_CHAR_W) as usize).max(TITLE_MIN_CHARS);
        let mut lines: Vec<String> = Vec::new();
        for word in text.split_whitespace() {
            match lines.last_mut() {
                Some(line) if line.chars().count() + 1 + word.chars().count() <= most => {
                    line.push(' ');
                    line.push_str(word);
                }
                _ => lines.push(word.to_owned()),
            }
        }
        if lines.is_empty() {
            lines.push(String::new());
        }
        let bottom = TITLE_Y + (lines.len() - 1) * TITLE_LINE_H + 6;
        Title { lines, bottom }
    }

    /// The width the longest line needs.
    fn width(&self) -> usize {
        let longest = self.lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        (longest as f64 * TITLE_CHAR_W).ceil() as usize + 2 * MARGIN
    }

    /// The opening of the chart: the `<svg>` element, a white background and the title.
    fn svg(&self, width: usize, height: usize) -> String {
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
        );
        for (i, line) in self.lines.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text class=\"title\" x=\"{MARGIN}\" y=\"{}\" font-family=\"system-ui, sans-serif\" font-size=\"14\" font-weight=\"bold\">{}</text>",
                TITLE_Y + i * TITLE_LINE_H,
                escape(line)
            );
        }
        s
    }
}

fn text_w(chars: usize) -> usize {
    (chars as f64 * CHAR_W).ceil() as usize
}

/// A label cut to `LABEL_CHARS` characters, `…` marking the cut (the bar's tooltip has it whole).
fn label(s: &str) -> String {
    if s.chars().count() <= LABEL_CHARS {
        return s.to_owned();
    }
    let mut cut: String = s.chars().take(LABEL_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The y of every `<text class="{class}" ...>`, from `y="..."` or a `translate(x,y)`.
    fn text_ys(svg: &str, class: &str) -> Vec<f64> {
        svg.split(&format!("<text class=\"{class}\""))
            .skip(1)
            .map(|rest| {
                let attrs = &rest[..rest.find('>').unwrap()];
                if let Some(t) = attrs.split("translate(").nth(1) {
                    return t[t.find(',').unwrap() + 1..t.find(')').unwrap()].parse().unwrap();
                }
                let y = attrs.split(" y=\"").nth(1).unwrap();
                y[..y.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    fn texts(svg: &str, class: &str) -> Vec<String> {
        svg.split(&format!("<text class=\"{class}\""))
            .skip(1)
            .map(|rest| {
                let inner = &rest[rest.find('>').unwrap() + 1..];
                inner[..inner.find("</text>").unwrap()].to_owned()
            })
            .collect()
    }

    #[test]
    fn ticks_are_round_steps_from_zero_past_the_maximum() {
        assert_eq!(nice_ticks(0), [0, 1]);
        assert_eq!(nice_ticks(1), [0, 1]);
        assert_eq!(nice_ticks(4), [0, 1, 2, 3, 4]);
        assert_eq!(nice_ticks(7), [0, 2, 4, 6, 8]);
        assert_eq!(nice_ticks(10), [0, 2, 4, 6, 8, 10]);
        assert_eq!(nice_ticks(23), [0, 5, 10, 15, 20, 25]);
        assert_eq!(nice_ticks(100), [0, 20, 40, 60, 80, 100]);
        assert_eq!(nice_ticks(101), [0, 50, 100, 150]);
        assert_eq!(nice_ticks(4321), [0, 1000, 2000, 3000, 4000, 5000]);
        for max in 0..3000u64 {
            let t = nice_ticks(max);
            let step = t[1];
            let mut m = step;
            while m.is_multiple_of(10) {
                m /= 10;
            }
            assert!([1, 2, 5].contains(&m), "{max}: step {step}");
            assert!(t[0] == 0 && *t.last().unwrap() >= max && t.len() <= 6, "{max}: {t:?}");
            assert!(t.windows(2).all(|w| w[1] - w[0] == step), "{max}: {t:?}");
            assert!(t[t.len() - 2] < max.max(1), "{max}: one step past the maximum at most: {t:?}");
        }
    }

    #[test]
    fn values_over_the_tallest_bar_stay_below_the_title() {
        let long = "FAIL_TO_PASS tests per instance, over every accepted record of the dataset, by bucket";
        for title in ["Difficulty", long] {
            let cols = stacked_columns(
                title,
                "tests",
                "instances",
                &["go".into(), "rust".into()],
                &[("easy".into(), vec![9, 2]), ("hard".into(), vec![3, 0])],
            );
            let bars = horizontal_bars(title, "records", &[("no_fixed_tests".into(), 12), ("timeout".into(), 1)]);
            for svg in [cols, bars] {
                let title_bottom = text_ys(&svg, "title").into_iter().fold(0.0, f64::max) + 5.0;
                let highest_value = text_ys(&svg, "value").into_iter().fold(f64::MAX, f64::min) - TEXT_H as f64;
                assert!(highest_value >= title_bottom + 4.0, "{title_bottom} vs {highest_value}\n{svg}");
                assert_eq!(texts(&svg, "title").join(" "), title, "the whole title, wrapped");
                let width: f64 = svg.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
                for line in texts(&svg, "title") {
                    assert!(line.chars().count() as f64 * TITLE_CHAR_W + 20.0 <= width, "{line} fits in {width}");
                }
            }
        }
    }

    #[test]
    fn axes_have_ticks_labels_and_titles() {
        let cols = stacked_columns(
            "Fix size",
            "changed lines",
            "instances",
            &["0".into(), "1-3".into()],
            &[("instances".into(), vec![7, 3])],
        );
        assert_eq!(texts(&cols, "tick"), ["0", "2", "4", "6", "8"]);
        assert_eq!(texts(&cols, "axis-title"), ["instances", "changed lines"]);
        assert_eq!(texts(&cols, "value"), ["7", "3"]);
        let ticks = text_ys(&cols, "tick");
        assert!(ticks.windows(2).all(|w| w[1] < w[0]), "ticks go up: {ticks:?}");
        let bars = horizontal_bars("Rejections", "records", &[("a".into(), 3)]);
        assert_eq!(texts(&bars, "tick"), ["0", "1", "2", "3"]);
        assert!(bars.contains("width=\"360.0\""), "the longest bar reaches the top tick");
    }

    #[test]
    fn charts_are_svg_with_escaped_text() {
        let bars = horizontal_bars("Rejections <all>", "records", &[("no_fixed_tests".into(), 10), ("a&b".into(), 0)]);
        assert!(bars.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(bars.contains("Rejections &lt;all&gt;") && bars.contains("a&amp;b") && bars.ends_with("</svg>\n"));
        let cols = stacked_columns(
            "Difficulty",
            "",
            "instances",
            &["go".into(), "rust".into()],
            &[("easy".into(), vec![1, 2]), ("hard".into(), vec![3, 0])],
        );
        assert_eq!(cols.matches("<rect x=").count(), 3 + 2, "three non-empty bars and two legend boxes");
        assert!(cols.contains(">4</text>"), "column totals are written");
        let long = "x".repeat(60);
        let cut = horizontal_bars("t", "", &[(long.clone(), 1)]);
        assert!(cut.contains(&format!("{}…</text>", "x".repeat(39))) && cut.contains(&format!("<title>{long}: 1")));
    }
}
