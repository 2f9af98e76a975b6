use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum PartitionError {
    #[error("shard count {0} is not a power of two between 2 and 65,536")]
    BadShardCount(u64),
    #[error("{shards} shards for {cells} cells: every shard needs at least one cell")]
    MoreShardsThanCells { shards: usize, cells: usize },
    #[error("{}", too_large(*.shard, *.local, *.halo))]
    ShardTooLarge { shard: usize, local: usize, halo: Option<usize> },
    #[error("scene: {0}")]
    BadScene(String),
    #[error("shard blob {shard}: {msg}")]
    BadBlob { shard: usize, msg: String },
}

fn too_large(shard: usize, local: usize, halo: Option<usize>) -> String {
    match halo {
        Some(h) => format!(
            "shard {shard} holds {local} local + {h} halo = {} cells, over the 65,535 that 16-bit indices address",
            local + h
        ),
        None => format!("shard {shard} holds {local} local cells, over the 65,535 that 16-bit indices address"),
    }
}
