use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "foam-ipu", version, about = "Render Radiant Foam scenes on the Graphcore IPU")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {}

fn main() {
    let cli = Cli::parse();
    let result: anyhow::Result<()> = match cli.cmd {};
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
