//! The example models. This crate is compiled twice: for the host (the CPU backend and the
//! types the apps launch with) and, by the apps' build script, for `nvptx64-nvidia-cuda` into
//! one PTX module.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

pub mod alloc_bench;
pub mod api_demo;
pub mod barnes_hut;
pub mod collision;
pub mod field_bench;
pub mod game_of_life;
pub mod generation;
pub mod gravity;
pub mod nbody;
pub mod semantics;
pub mod smoke;
pub mod storm;
pub mod structure;
pub mod sugarscape;
pub mod traffic;
pub mod wator;
