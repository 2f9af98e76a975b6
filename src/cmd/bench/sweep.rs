//! `--sweep` values: `rc=1,5,10,20,40` or `batch=rows:1,2,3|cols:1,2,4`.

use crate::device::Batch;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sweep {
    Rc(Vec<u32>),
    Batch(Vec<Batch>),
}

impl Sweep {
    pub fn name(&self) -> &'static str {
        match self {
            Sweep::Rc(_) => "rc",
            Sweep::Batch(_) => "batch",
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Sweep::Rc(v) => v.len(),
            Sweep::Batch(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn list(key: &str, s: &str) -> Result<Vec<u32>, String> {
    s.split(',')
        .map(|v| {
            let v = v.trim();
            let n: u32 = v.parse().map_err(|_| format!("{key}: '{v}' is not a whole number"))?;
            if n == 0 {
                return Err(format!("{key}: values must be at least 1, not 0"));
            }
            Ok(n)
        })
        .collect()
}

impl std::str::FromStr for Sweep {
    type Err = String;

    fn from_str(s: &str) -> Result<Sweep, String> {
        let (key, values) =
            s.split_once('=').ok_or_else(|| format!("'{s}' must be rc=N,N,... or batch=rows:N,...|cols:N,..."))?;
        if values.trim().is_empty() {
            return Err(format!("'{s}': no values after '='"));
        }
        match key.trim() {
            "rc" => Ok(Sweep::Rc(list("rc", values)?)),
            "batch" => {
                let mut out = Vec::new();
                for group in values.split('|') {
                    let (kind, ns) = group.split_once(':').ok_or_else(|| {
                        format!("batch group '{group}' must be rows:N,N,..., cols:N,N,... or blocks:N,N,...")
                    })?;
                    let make = Batch::kind(kind.trim()).ok_or_else(|| {
                        format!("batch group '{group}': unknown scan order '{}' (rows, cols or blocks)", kind.trim())
                    })?;
                    out.extend(list(&format!("batch {}", kind.trim()), ns)?.into_iter().map(make));
                }
                Ok(Sweep::Batch(out))
            }
            k => Err(format!("unknown sweep parameter '{k}' (rc or batch)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_kinds() {
        assert_eq!("rc=1,5,10".parse::<Sweep>().unwrap(), Sweep::Rc(vec![1, 5, 10]));
        let b: Sweep = "batch=rows:1,2|cols:4|blocks:8".parse().unwrap();
        let want = vec![Batch::Rows(1), Batch::Rows(2), Batch::Cols(4), Batch::Blocks(8)];
        assert_eq!(b, Sweep::Batch(want));
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "rc=0",
            "rc=",
            "rc=1,,2",
            "rc=x",
            "foo=1",
            "rc",
            "batch=rows",
            "batch=diag:1",
            "batch=rows:0",
            "batch=rows:1|",
        ] {
            assert!(bad.parse::<Sweep>().is_err(), "{bad}");
        }
    }
}
