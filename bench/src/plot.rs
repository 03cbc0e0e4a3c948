//! SVG line plots shaped like the survey's figures: one line per allocator over sizes or
//! thread counts, log axes where the survey uses them. SVG only, so no fonts or system
//! libraries are needed.

use std::path::Path;

use anyhow::anyhow;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;

/// One figure: named lines of (x, y) points.
#[derive(Clone, Debug)]
pub struct Figure {
    /// File name without extension.
    pub name: String,
    pub title: String,
    pub x_label: &'static str,
    pub y_label: &'static str,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// A palette of distinguishable colours, cycled per line.
const COLOURS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(255, 215, 0),
];

/// Draw `figure` into `<dir>/<name>.svg`. Points that cannot be drawn on a log axis
/// (zero or negative) are left out; a figure with no point left is not written (`Ok(false)`).
pub fn draw(dir: &Path, figure: &Figure) -> anyhow::Result<bool> {
    let keep = |&(x, y): &(f64, f64)| {
        x.is_finite() && y.is_finite() && (!figure.log_x || x > 0.0) && (!figure.log_y || y > 0.0)
    };
    let series: Vec<(&str, Vec<(f64, f64)>)> = figure
        .series
        .iter()
        .map(|(name, points)| (name.as_str(), points.iter().copied().filter(keep).collect::<Vec<_>>()))
        .filter(|(_, points)| !points.is_empty())
        .collect();
    let all = || series.iter().flat_map(|(_, points)| points.iter());
    let Some((x_min, x_max)) = bounds(all().map(|p| p.0)) else { return Ok(false) };
    let Some((y_min, y_max)) = bounds(all().map(|p| p.1)) else { return Ok(false) };
    // Pad the ranges so single points and flat lines still get an axis.
    let (x_lo, x_hi) = pad(x_min, x_max, figure.log_x);
    let (y_lo, y_hi) = pad(y_min, y_max, figure.log_y);

    let path = dir.join(format!("{}.svg", figure.name));
    let root = SVGBackend::new(&path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let mut builder = ChartBuilder::on(&root);
    builder.caption(&figure.title, ("sans-serif", 20)).margin(12).x_label_area_size(44).y_label_area_size(70);
    // The four axis combinations are four chart types in plotters; one generic function draws
    // all of them.
    match (figure.log_x, figure.log_y) {
        (false, false) => lines(builder.build_cartesian_2d(x_lo..x_hi, y_lo..y_hi), figure, &series),
        (true, false) => {
            lines(builder.build_cartesian_2d((x_lo..x_hi).log_scale(), y_lo..y_hi), figure, &series)
        }
        (false, true) => {
            lines(builder.build_cartesian_2d(x_lo..x_hi, (y_lo..y_hi).log_scale()), figure, &series)
        }
        (true, true) => lines(
            builder.build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale()),
            figure,
            &series,
        ),
    }?;
    root.present().map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(true)
}

fn lines<'a, X, Y>(
    chart: Result<ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>, DrawingAreaErrorKind<std::io::Error>>,
    figure: &Figure,
    series: &[(&str, Vec<(f64, f64)>)],
) -> anyhow::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = chart.map_err(|e| anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .x_desc(figure.x_label)
        .y_desc(figure.y_label)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    for (i, (name, points)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2)))
            .map_err(|e| anyhow!("{e}"))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2)));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(|e| anyhow!("{e}"))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    Ok(())
}

fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

fn pad(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
        ((lo - 0.05 * span).min(if lo >= 0.0 { 0.0 } else { lo }), hi + 0.05 * span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_every_axis_combination() {
        let dir = std::env::temp_dir().join(format!("dynasoar-bench-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (i, (log_x, log_y)) in
            [(false, false), (true, false), (false, true), (true, true)].into_iter().enumerate()
        {
            let figure = Figure {
                name: format!("f{i}"),
                title: "t".into(),
                x_label: "x",
                y_label: "y",
                log_x,
                log_y,
                series: vec![("a".into(), vec![(1.0, 2.0), (4.0, 8.0)]), ("b".into(), vec![(2.0, 0.0)])],
            };
            assert!(draw(&dir, &figure).unwrap());
            let svg = std::fs::read_to_string(dir.join(format!("f{i}.svg"))).unwrap();
            assert!(svg.contains("<svg") && svg.contains("polyline"), "{svg}");
        }
        let empty = Figure { name: "e".into(), series: vec![], ..Figure::clone(&dummy()) };
        assert!(!draw(&dir, &empty).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn dummy() -> Figure {
        Figure {
            name: String::new(),
            title: String::new(),
            x_label: "",
            y_label: "",
            log_x: true,
            log_y: true,
            series: vec![],
        }
    }
}
