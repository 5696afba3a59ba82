//! Compiles the kernels' shared C logic (cuda/eligibility.cu through cuda/host_model.c) for the
//! host, so it is tested on machines without CUDA.

fn main() {
    println!("cargo:rerun-if-changed=cuda/eligibility.cu");
    println!("cargo:rerun-if-changed=cuda/host_model.c");
    cc::Build::new()
        .file("cuda/host_model.c")
        .include("cuda")
        .std("c11")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Wno-unused-function")
        .opt_level(2)
        .compile("el_host_model");
}
