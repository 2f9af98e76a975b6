use crate::PartitionError;

/// The view-dependent colour a shard carries for each of its local cells (layout.h:
/// the blob's SH section): `rest` per channel beyond DC, from the scene's `sh_rest`
/// floats (`stride` per site, in scene.ply's order), as f32 or binary16.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShPayload<'a> {
    pub coeffs: &'a [f32],
    /// Floats per site in `coeffs`.
    pub stride: usize,
    /// Coefficients per channel the blob holds: 0, 3, 8 or 15 (SH degree 0..3).
    pub rest: usize,
    pub f32: bool,
}

impl ShPayload<'_> {
    /// No view-dependent colour: DC only.
    pub const NONE: ShPayload<'static> = ShPayload { coeffs: &[], stride: 0, rest: 0, f32: false };

    /// Bytes of one local cell's coefficients (layout.h's foam_sh_cell_bytes):
    /// binary16 padded to 8, as the march loads two red-green pairs as one 64-bit
    /// word, which the IPU loads only from 8-byte boundaries.
    pub fn cell_bytes(&self) -> usize {
        if self.f32 { 12 * self.rest } else { (6 * self.rest).next_multiple_of(8) }
    }

    /// Bytes of a blob's SH section for `n_local` cells, padded to 4.
    pub fn section_bytes(&self, n_local: usize) -> usize {
        (self.cell_bytes() * n_local).next_multiple_of(4)
    }
}

/// A borrowed view of the scene arrays the partitioner needs (the root crate's `Scene`
/// converts into it). `adjacency_end` holds EXCLUSIVE ends, as in `scene.ply`.
#[derive(Clone, Copy, Debug)]
pub struct SceneRef<'a> {
    pub positions: &'a [[f32; 3]],
    pub density: &'a [f32],
    pub color: &'a [[u8; 3]],
    pub adjacency_end: &'a [u32],
    pub adjacency: &'a [u32],
    /// What each shard carries of the cells' SH coefficients.
    pub sh: ShPayload<'a>,
}

impl<'a> SceneRef<'a> {
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    pub fn neighbours(&self, i: usize) -> &'a [u32] {
        let start = if i == 0 { 0 } else { self.adjacency_end[i - 1] as usize };
        &self.adjacency[start..self.adjacency_end[i] as usize]
    }

    /// Checks what the partitioner relies on, so a malformed scene is an error, not a
    /// panic: matching lengths, finite sites, a well-formed CSR, neighbour ids in range.
    pub fn validate(&self) -> Result<(), PartitionError> {
        let n = self.len();
        let bad = |m: String| Err(PartitionError::BadScene(m));
        for (name, len) in
            [("density", self.density.len()), ("color", self.color.len()), ("adjacency_end", self.adjacency_end.len())]
        {
            if len != n {
                return bad(format!("{name} has {len} entries for {n} cells"));
            }
        }
        let sh = &self.sh;
        if sh.rest > 0 && (3 * sh.rest > sh.stride || sh.coeffs.len() != sh.stride * n) {
            return bad(format!(
                "{} SH coefficients per channel asked of {} floats per cell ({} for {n} cells)",
                sh.rest,
                sh.stride,
                sh.coeffs.len()
            ));
        }
        if let Some(i) = self.positions.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
            return bad(format!("cell {i} has a non-finite position {:?}", self.positions[i]));
        }
        let mut prev = 0u32;
        for (i, &end) in self.adjacency_end.iter().enumerate() {
            if end < prev {
                return bad(format!("adjacency_end decreases at cell {i} ({end} < {prev})"));
            }
            prev = end;
        }
        if prev as usize != self.adjacency.len() {
            return bad(format!(
                "adjacency_end ends at {prev} but the adjacency list has {} entries",
                self.adjacency.len()
            ));
        }
        if let Some(k) = self.adjacency.iter().position(|&j| j as usize >= n) {
            let cell = self.adjacency_end.partition_point(|&e| e as usize <= k);
            return bad(format!("cell {cell} lists neighbour {} but the scene has {n} cells", self.adjacency[k]));
        }
        Ok(())
    }
}
