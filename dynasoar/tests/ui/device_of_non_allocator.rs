use dynasoar::prelude::*;

fn spawn(dev: &Device<u32>) {
    let _ = dev;
}

fn main() {}
