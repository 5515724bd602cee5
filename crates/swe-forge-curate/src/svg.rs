//! Small SVG charts written by hand (no plotting crate): horizontal bars, and vertical bars
//! stacked by series. Text is escaped; sizes are fixed so the files diff well.

use std::fmt::Write as _;

/// Colours of the series, in order.
pub(crate) const PALETTE: [&str; 6] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948"];

const FONT: &str = "font-family=\"system-ui, sans-serif\" font-size=\"12\"";

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// One bar per row, longest first as given; the value is written at the bar's end.
pub(crate) fn horizontal_bars(title: &str, rows: &[(String, u64)]) -> String {
    let label_w = 12 + 7 * rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0).min(40);
    let bar_w = 360usize;
    let row_h = 20usize;
    let (width, height) = (label_w + bar_w + 60, 40 + row_h * rows.len().max(1));
    let max = rows.iter().map(|r| r.1).max().unwrap_or(0).max(1) as f64;
    let mut s = header(width, height, title);
    for (i, (label, value)) in rows.iter().enumerate() {
        let y = 30 + i * row_h;
        let w = (*value as f64 / max * bar_w as f64).round().max(if *value > 0 { 1.0 } else { 0.0 });
        let label: String = label.chars().take(40).collect();
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" {FONT}>{}</text>\
             <rect x=\"{label_w}\" y=\"{}\" width=\"{w}\" height=\"{}\" fill=\"{}\"><title>{}: {value}</title></rect>\
             <text x=\"{}\" y=\"{}\" {FONT}>{value}</text>",
            label_w - 6,
            y + 14,
            escape(&label),
            y + 3,
            row_h - 6,
            PALETTE[0],
            escape(&label),
            label_w as f64 + w + 4.0,
            y + 14,
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Vertical bars, one per category, stacked by series (`series[k].1[i]` is series k's count in
/// category i), with a legend when there is more than one series.
pub(crate) fn stacked_columns(title: &str, categories: &[String], series: &[(String, Vec<u64>)]) -> String {
    let col_w = 44usize;
    let plot_h = 200usize;
    let left = 50usize;
    let width = left + col_w * categories.len().max(1) + 130;
    let height = plot_h + 110;
    let totals: Vec<u64> =
        (0..categories.len()).map(|i| series.iter().map(|s| s.1.get(i).copied().unwrap_or(0)).sum()).collect();
    let max = totals.iter().copied().max().unwrap_or(0).max(1);
    let mut s = header(width, height, title);
    let base = 30 + plot_h;
    let _ = writeln!(
        s,
        "<line x1=\"{left}\" y1=\"{base}\" x2=\"{}\" y2=\"{base}\" stroke=\"#999\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\" {FONT}>{max}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\" {FONT}>0</text>",
        left + col_w * categories.len(),
        left - 6,
        34,
        left - 6,
        base
    );
    for (i, cat) in categories.iter().enumerate() {
        let x = left + i * col_w + 6;
        let mut y = base as f64;
        for (k, (name, values)) in series.iter().enumerate() {
            let v = values.get(i).copied().unwrap_or(0);
            if v == 0 {
                continue;
            }
            let h = v as f64 / max as f64 * plot_h as f64;
            y -= h;
            let _ = writeln!(
                s,
                "<rect x=\"{x}\" y=\"{y:.1}\" width=\"{}\" height=\"{h:.1}\" fill=\"{}\"><title>{} {}: {v}</title></rect>",
                col_w - 12,
                PALETTE[k % PALETTE.len()],
                escape(cat),
                escape(name)
            );
        }
        let cx = x + (col_w - 12) / 2;
        let _ = writeln!(
            s,
            "<text x=\"{cx}\" y=\"{:.1}\" text-anchor=\"middle\" {FONT}>{}</text>\
             <text transform=\"translate({cx},{}) rotate(45)\" {FONT}>{}</text>",
            y - 4.0,
            totals[i],
            base + 14,
            escape(&cat.chars().take(24).collect::<String>())
        );
    }
    if series.len() > 1 {
        let lx = left + col_w * categories.len() + 20;
        for (k, (name, _)) in series.iter().enumerate() {
            let ly = 40 + k * 18;
            let _ = writeln!(
                s,
                "<rect x=\"{lx}\" y=\"{ly}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" {FONT}>{}</text>",
                PALETTE[k % PALETTE.len()],
                lx + 18,
                ly + 11,
                escape(name)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

fn header(width: usize, height: usize, title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n\
         <text x=\"10\" y=\"18\" font-family=\"system-ui, sans-serif\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_with_escaped_text() {
        let bars = horizontal_bars("Rejections <all>", &[("no_fixed_tests".into(), 10), ("a&b".into(), 0)]);
        assert!(bars.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(bars.contains("Rejections &lt;all&gt;") && bars.contains("a&amp;b") && bars.ends_with("</svg>\n"));
        assert!(bars.contains("width=\"360\""), "the longest bar fills the plot");
        let cols = stacked_columns(
            "Difficulty",
            &["go".into(), "rust".into()],
            &[("easy".into(), vec![1, 2]), ("hard".into(), vec![3, 0])],
        );
        assert_eq!(cols.matches("<rect x=").count(), 3 + 2, "three non-empty bars and two legend boxes");
        assert!(cols.contains(">4</text>"), "column totals are written");
    }
}
