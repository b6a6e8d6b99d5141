//! The units of cost a commit records: dollars kept exact, and one model's share of a run.
//! Trailers of the commit schema ([`crate::record::schema`]) hold them as text.

/// An amount of US dollars, exact to the billionth (what Claude Code reports is a float; a
/// sum of floats would drift).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Usd {
    pub nanos: u64,
}

impl Usd {
    /// From Claude Code's float; `None` for a negative or non-finite one.
    pub(crate) fn from_f64(dollars: f64) -> Option<Usd> {
        (dollars.is_finite() && dollars >= 0.0).then(|| Usd {
            nanos: (dollars * 1e9).round() as u64,
        })
    }

    pub fn as_f64(self) -> f64 {
        self.nanos as f64 / 1e9
    }

    /// `0.012345678`: every digit kept, trailing zeros left out.
    pub fn decimal(self) -> String {
        let whole = self.nanos / 1_000_000_000;
        let fraction = format!("{:09}", self.nanos % 1_000_000_000);
        let fraction = fraction.trim_end_matches('0');
        if fraction.is_empty() {
            whole.to_string()
        } else {
            format!("{whole}.{fraction}")
        }
    }

    /// Reads [`Usd::decimal`] back.
    pub fn parse(text: &str) -> Option<Usd> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || !digits(fraction) || fraction.len() > 9 {
            return None;
        }
        let whole: u64 = whole.parse().ok()?;
        let fraction: u64 = format!("{fraction:0<9}").parse().ok()?;
        whole
            .checked_mul(1_000_000_000)?
            .checked_add(fraction)
            .map(|nanos| Usd { nanos })
    }

    /// For people: `$0.0123`, four significant decimals at least.
    pub fn human(self) -> String {
        if self.nanos >= 10_000_000 {
            format!("${:.2}", self.as_f64())
        } else {
            format!("${:.4}", self.as_f64())
        }
    }
}

/// One model's share of headless runs, as Claude Code's `modelUsage` reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelUsage {
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub cost: Usd,
}

impl ModelUsage {
    /// `input=1 output=2 cache_read=3 cache_write=4 cost_usd=0.5 model=NAME` (the name last:
    /// it may hold anything).
    pub fn encode(&self) -> String {
        format!(
            "input={} output={} cache_read={} cache_write={} cost_usd={} model={}",
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.cost.decimal(),
            self.model
        )
    }

    /// Reads [`ModelUsage::encode`] back.
    pub fn decode(text: &str) -> Option<ModelUsage> {
        let mut rest = text;
        let mut next = |key: &str| {
            let (pair, after) = rest.split_once(' ')?;
            rest = after;
            pair.strip_prefix(key)?.strip_prefix('=').map(str::to_owned)
        };
        let input_tokens = next("input")?.parse().ok()?;
        let output_tokens = next("output")?.parse().ok()?;
        let cache_read_tokens = next("cache_read")?.parse().ok()?;
        let cache_write_tokens = next("cache_write")?.parse().ok()?;
        let cost = Usd::parse(&next("cost_usd")?)?;
        let model = rest.strip_prefix("model=")?.to_owned();
        Some(ModelUsage {
            model,
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_write_tokens,
            cost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_are_kept_exact_as_text() {
        for (text, nanos) in [
            ("0", 0),
            ("1", 1_000_000_000),
            ("0.5", 500_000_000),
            ("0.000000001", 1),
        ] {
            assert_eq!(Usd::parse(text), Some(Usd { nanos }), "{text}");
            assert_eq!(Usd { nanos }.decimal(), text);
        }
        for bad in ["", ".5", "1.", "-1", "1e3", "0.0000000001", "x"] {
            assert_eq!(Usd::parse(bad), None, "{bad}");
        }
        assert_eq!(Usd::from_f64(-1.0), None);
        assert_eq!(Usd { nanos: 1_234_000 }.human(), "$0.0012");
        assert_eq!(
            Usd {
                nanos: 1_234_000_000
            }
            .human(),
            "$1.23"
        );
    }
}
