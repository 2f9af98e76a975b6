use clap::{Parser, Subcommand};
#[allow(unused_imports)]
use foam_ipu::cmd;

#[derive(Parser)]
#[command(name = "foam-ipu", version, about = "Render Radiant Foam scenes on the Graphcore IPU")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

// One variant per subcommand; each module in `cmd` owns its Args and run().
#[derive(Subcommand)]
enum Cmd {
    /// Summarise and validate a scene.ply.
    Info(cmd::info::Args),
    Reference(cmd::reference::Args),
    Compare(cmd::compare::Args),
    Cameras(cmd::cameras::Args),
    /// Cut a scene into tile shards and check every tracer tile fits its SRAM.
    Partition(cmd::partition::Args),
    /// Write a procedural Radiant Foam scene (true Voronoi adjacency).
    Synth(cmd::synth::Args),
    /// Render with the IPU design (tracers, routers, a spill store, injectors) on the host runtime or an IPU.
    Render(Box<cmd::render::Args>),
    /// Measure the device renderer against the reference (iterations, hops, time, IPU estimate).
    Bench(cmd::bench::Args),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // Bad arguments are bad input like any other: one line, exit 1. clap's
            // usage block and hints would make it several.
            let text = e.render().to_string();
            eprintln!("{}", cmd::printable(text.lines().next().unwrap_or("error: invalid arguments")));
            std::process::exit(1);
        }
    };
    let result: anyhow::Result<()> = match cli.cmd {
        Cmd::Info(a) => cmd::info::run(a),
        Cmd::Reference(a) => cmd::reference::run(a),
        Cmd::Compare(a) => cmd::compare::run(a),
        Cmd::Cameras(a) => cmd::cameras::run(a),
        Cmd::Partition(a) => cmd::partition::run(a),
        Cmd::Synth(a) => cmd::synth::run(a),
        Cmd::Render(a) => cmd::render::run(*a),
        Cmd::Bench(a) => cmd::bench::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {}", cmd::printable(&cmd::error_line(&e)));
        std::process::exit(if e.is::<cmd::CheckFailed>() { 2 } else { 1 });
    }
}
