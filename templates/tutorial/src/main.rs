//! Runs the model and draws it: `cargo run --release -- --backend cpu --render out`.
use std::path::PathBuf;

use clap::Parser;
use dynasoar::host::Backend;
use dynasoar::prelude::*;
use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, Frame, Rgba, RgbaImage};
use indicatif::ProgressBar;
use stardust::{Dust, EMIT, Sky, Star};

/// The model compiled for the GPU by build.rs.
const PTX: &str = dynasoar::include_ptx!();

/// Stars that pull dust and swallow it.
#[derive(Parser)]
struct Args {
    /// Where to run: auto (the GPU if there is one), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// Steps to simulate.
    #[arg(long, default_value_t = 300)]
    steps: u32,
    /// Stars.
    #[arg(long, default_value_t = 6)]
    stars: u64,
    /// Seed of the random numbers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write `stardust.gif` (a frame every 5 steps) and `last.png` into this folder.
    #[arg(long, value_name = "DIR")]
    render: Option<PathBuf>,
}

/// A picture of the sky: dust in blue, stars in yellow.
fn draw(stars: &[Star], dust: &[Dust]) -> RgbaImage {
    let size = 256;
    let mut image = RgbaImage::from_pixel(size, size, Rgba([0, 0, 16, 255]));
    let mut plot = |p: Vec2, color: [u8; 4]| {
        let (x, y) = ((p.x + 1.0) * 0.5 * size as f32, (p.y + 1.0) * 0.5 * size as f32);
        if x >= 0.0 && y >= 0.0 && x < size as f32 && y < size as f32 {
            image.put_pixel(x as u32, y as u32, Rgba(color));
        }
    };
    dust.iter().for_each(|d| plot(d.pos, [120, 170, 255, 255]));
    for star in stars {
        for (dx, dy) in [(0.0, 0.0), (1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
            plot(star.pos + Vec2::new(dx, dy) * (2.0 / size as f32), [255, 230, 80, 255]);
        }
    }
    image
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let rt = Runtime::<Sky>::builder(PTX).backend(args.backend).heap_bytes(64 << 20).build()?;
    rt.parallel_new_with(Star::place, args.stars, args.seed)?;
    let mut frames = Vec::new();
    let progress = ProgressBar::new(args.steps.into());
    for step in 1..=args.steps {
        rt.parallel_do(Star::emit)?;
        rt.parallel_do(Dust::fly)?;
        if args.render.is_some() && (step % 5 == 0 || step == args.steps) {
            frames.push(draw(&rt.collect::<Star>()?, &rt.collect::<Dust>()?));
        }
        progress.inc(1);
    }
    progress.finish_and_clear();

    let (stars, dust) = (rt.collect::<Star>()?, rt.collect::<Dust>()?);
    let swallowed: u64 = stars.iter().map(|s| u64::from(s.swallowed)).sum();
    let emitted = args.stars * u64::from(EMIT) * u64::from(args.steps);
    println!(
        "after {} steps: {emitted} grains emitted, {swallowed} swallowed, {} flying",
        args.steps,
        dust.len()
    );

    if let (Some(dir), Some(last)) = (&args.render, frames.last()) {
        std::fs::create_dir_all(dir)?;
        last.save(dir.join("last.png"))?;
        let mut gif = GifEncoder::new(std::fs::File::create(dir.join("stardust.gif"))?);
        gif.set_repeat(Repeat::Infinite)?;
        for frame in frames {
            gif.encode_frame(Frame::from_parts(frame, 0, 0, Delay::from_numer_denom_ms(40, 1)))?;
        }
        println!("pictures in {}", dir.display());
    }
    Ok(())
}
