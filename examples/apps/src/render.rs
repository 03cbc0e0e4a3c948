//! Pictures of simulations: an RGB canvas, PNG frames every k steps, and an animated GIF.

use std::path::{Path, PathBuf};

use anyhow::Context;
use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, Frame, RgbImage, RgbaImage, imageops};

/// Options of `--render`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RenderArgs {
    /// Write PNG frames (frame_NNNNNN.png) into this directory; frames and the GIF of an
    /// earlier run there are removed first.
    #[arg(long, value_name = "DIR")]
    pub render: Option<PathBuf>,
    /// Render every this many steps (and the last one).
    #[arg(
        long,
        default_value_t = 10,
        value_name = "K",
        requires = "render",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub render_every: u32,
    /// Also write the frames as an animated GIF (`animation.gif` in the render directory).
    #[arg(long, requires = "render")]
    pub gif: bool,
    /// Width of rendered frames in pixels, 16 to 8192 (height follows the world's aspect ratio).
    #[arg(
        long,
        default_value_t = 512,
        requires = "render",
        value_parser = clap::value_parser!(u32).range(16..=MAX_WIDTH as i64)
    )]
    pub render_width: u32,
}

/// Widest frame `--render-width` takes.
pub const MAX_WIDTH: u32 = 8192;

/// Longest side of a canvas: pictures of worlds with extreme aspect ratios are cut off there.
pub const MAX_SIDE: u32 = 2 * MAX_WIDTH;

/// An RGB picture.
pub struct Canvas {
    pub image: RgbImage,
}

impl Canvas {
    /// A `width` x `height` canvas (each side at least 1 and at most [`MAX_SIDE`]).
    pub fn new(width: u32, height: u32, background: [u8; 3]) -> Self {
        let (w, h) = (width.clamp(1, MAX_SIDE), height.clamp(1, MAX_SIDE));
        Canvas { image: RgbImage::from_pixel(w, h, image::Rgb(background)) }
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
    /// The GIF's frames, made small when recorded.
    frames: Vec<RgbImage>,
    /// Every how many recorded frames one goes into the GIF (doubles as they pile up).
    gif_stride: usize,
    written: usize,
}

/// Most frames kept for the GIF (evenly thinned beyond that).
const GIF_FRAMES: usize = 200;

/// Width of the GIF's frames at most (GIFs are palette images: keep them small).
const GIF_WIDTH: u32 = 400;

impl Recorder {
    /// A recorder for `args`; with `--render`, creates the directory and removes the frames and
    /// the GIF of an earlier run from it (so that it holds this run's frames only).
    pub fn new(args: &RenderArgs) -> anyhow::Result<Self> {
        if let Some(dir) = &args.render {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            remove_old_frames(dir)?;
        }
        anyhow::ensure!(args.render.is_none() || args.render_every > 0, "--render-every must be at least 1");
        Ok(Recorder {
            dir: args.render.clone(),
            every: args.render_every.max(1),
            gif: args.gif,
            width: args.render_width.clamp(16, MAX_WIDTH),
            frames: Vec::new(),
            gif_stride: 1,
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
        if self.gif && self.written.is_multiple_of(self.gif_stride) {
            self.frames.push(small(canvas.image));
            if self.frames.len() >= 2 * GIF_FRAMES {
                // Keep every other frame, and from now on every other one of those recorded.
                let mut k = 0;
                self.frames.retain(|_| {
                    k += 1;
                    k % 2 == 1
                });
                self.gif_stride *= 2;
            }
        }
        self.written += 1;
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

/// Remove the frames (`frame_*.png`) and the GIF (`animation.gif`) that a run wrote into `dir`.
fn remove_old_frames(dir: &Path) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = (name.starts_with("frame_") && name.ends_with(".png")) || name == "animation.gif";
        if ours && entry.file_type().is_ok_and(|t| t.is_file()) {
            let path = entry.path();
            std::fs::remove_file(&path)
                .with_context(|| format!("removing the old frame {}", path.display()))?;
        }
    }
    Ok(())
}

/// `frame` at most [`GIF_WIDTH`] wide.
fn small(frame: RgbImage) -> RgbImage {
    if frame.width() <= GIF_WIDTH {
        return frame;
    }
    let h = (frame.height() as u64 * GIF_WIDTH as u64 / frame.width() as u64).max(1) as u32;
    imageops::resize(&frame, GIF_WIDTH, h, imageops::FilterType::Nearest)
}

fn write_gif(path: &Path, frames: &[RgbImage]) -> anyhow::Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    let mut encoder = GifEncoder::new_with_speed(file, 10);
    encoder.set_repeat(Repeat::Infinite)?;
    let step = frames.len().div_ceil(GIF_FRAMES).max(1);
    for frame in frames.iter().step_by(step) {
        let rgba: RgbaImage = image::DynamicImage::ImageRgb8(frame.clone()).into_rgba8();
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
