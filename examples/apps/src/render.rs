//! Pictures of simulations: an RGB canvas, PNG frames every k steps, and an animated GIF.

use std::path::{Path, PathBuf};

use anyhow::Context;
use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, Frame, RgbImage, RgbaImage, imageops};

/// Options of `--render`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RenderArgs {
    /// Write PNG frames into this directory.
    #[arg(long, value_name = "DIR")]
    pub render: Option<PathBuf>,
    /// Render every this many steps (and the last one).
    #[arg(long, default_value_t = 10, value_name = "K")]
    pub render_every: u32,
    /// Also write the frames as an animated GIF (`animation.gif` in the render directory).
    #[arg(long)]
    pub gif: bool,
    /// Width of rendered frames in pixels (height follows the world's aspect ratio).
    #[arg(long, default_value_t = 512)]
    pub render_width: u32,
}

/// An RGB picture.
pub struct Canvas {
    pub image: RgbImage,
}

impl Canvas {
    pub fn new(width: u32, height: u32, background: [u8; 3]) -> Self {
        Canvas { image: RgbImage::from_pixel(width.max(1), height.max(1), image::Rgb(background)) }
    }

    pub fn width(&self) -> u32 {
        self.image.width()
    }

    pub fn height(&self) -> u32 {
        self.image.height()
    }

    /// Set a pixel (ignored outside the canvas).
    pub fn set(&mut self, x: i64, y: i64, color: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as u32) < self.width() && (y as u32) < self.height() {
            self.image.put_pixel(x as u32, y as u32, image::Rgb(color));
        }
    }

    /// A filled disc of `radius` pixels.
    pub fn disc(&mut self, cx: f32, cy: f32, radius: f32, color: [u8; 3]) {
        let r = radius.max(0.5);
        let (x0, x1) = ((cx - r).floor() as i64, (cx + r).ceil() as i64);
        let (y0, y1) = ((cy - r).floor() as i64, (cy + r).ceil() as i64);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f32 + 0.5 - cx, y as f32 + 0.5 - cy);
                if dx * dx + dy * dy <= r * r {
                    self.set(x, y, color);
                }
            }
        }
    }

    /// A line of pixels from (x0, y0) to (x1, y1).
    pub fn line(&mut self, x0: f32, y0: f32, x1: f32, y1: f32, color: [u8; 3]) {
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0) as i64;
        for i in 0..=steps {
            let t = i as f32 / steps as f32;
            self.set((x0 + (x1 - x0) * t) as i64, (y0 + (y1 - y0) * t) as i64, color);
        }
    }
}

/// Writes frames as requested by [`RenderArgs`].
pub struct Recorder {
    dir: Option<PathBuf>,
    every: u32,
    gif: bool,
    width: u32,
    frames: Vec<RgbImage>,
    written: usize,
}

/// Most frames kept for the GIF (evenly thinned beyond that).
const GIF_FRAMES: usize = 200;

impl Recorder {
    pub fn new(args: &RenderArgs) -> anyhow::Result<Self> {
        if let Some(dir) = &args.render {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        anyhow::ensure!(args.render.is_none() || args.render_every > 0, "--render-every must be at least 1");
        Ok(Recorder {
            dir: args.render.clone(),
            every: args.render_every.max(1),
            gif: args.gif,
            width: args.render_width.max(16),
            frames: Vec::new(),
            written: 0,
        })
    }

    /// Whether anything is rendered at all.
    pub fn enabled(&self) -> bool {
        self.dir.is_some()
    }

    /// Frame width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Whether step `step` of `last` is rendered.
    pub fn wants(&self, step: u32, last: u32) -> bool {
        self.enabled() && (step.is_multiple_of(self.every) || step == last)
    }

    /// Write `canvas` as the frame of `step`.
    pub fn record(&mut self, step: u32, canvas: Canvas) -> anyhow::Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let path = dir.join(format!("frame_{step:06}.png"));
        canvas.image.save(&path).with_context(|| format!("writing {}", path.display()))?;
        self.written += 1;
        if self.gif {
            self.frames.push(canvas.image);
        }
        Ok(())
    }

    /// Write the GIF (if asked); returns the number of frames written.
    pub fn finish(self) -> anyhow::Result<usize> {
        if let (Some(dir), true) = (&self.dir, self.gif) {
            write_gif(&dir.join("animation.gif"), &self.frames)?;
        }
        Ok(self.written)
    }
}

fn write_gif(path: &Path, frames: &[RgbImage]) -> anyhow::Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    let mut encoder = GifEncoder::new_with_speed(file, 10);
    encoder.set_repeat(Repeat::Infinite)?;
    let step = frames.len().div_ceil(GIF_FRAMES).max(1);
    for frame in frames.iter().step_by(step) {
        // GIFs are palette images: keep them small.
        let small = if frame.width() > 400 {
            let h = frame.height() * 400 / frame.width();
            imageops::resize(frame, 400, h.max(1), imageops::FilterType::Nearest)
        } else {
            frame.clone()
        };
        let rgba: RgbaImage = image::DynamicImage::ImageRgb8(small).into_rgba8();
        encoder.encode_frame(Frame::from_parts(rgba, 0, 0, Delay::from_numer_denom_ms(80, 1)))?;
    }
    Ok(())
}

/// A color ramp from blue (0) through green to red (1).
pub fn heat(t: f32) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    let r = (255.0 * (2.0 * t - 1.0).clamp(0.0, 1.0)) as u8;
    let g = (255.0 * (1.0 - (2.0 * t - 1.0).abs())) as u8;
    let b = (255.0 * (1.0 - 2.0 * t).clamp(0.0, 1.0)) as u8;
    [r, g, b]
}
