//! The values a commit records about positions (see `model::positions` for what they mean):
//! a stance, a share of one (a confidence, a consensus score) in hundredths, an open point and
//! what stopping at convergence would have saved. They live here, beside the schema that
//! writes them, so the record needs nothing from the layers above it.

use serde::{Deserialize, Serialize};

/// What a seat holds about the question's proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stance {
    For,
    Against,
    Mixed,
    #[default]
    Undecided,
}

impl Stance {
    pub const ALL: [Stance; 4] = [
        Stance::For,
        Stance::Mixed,
        Stance::Undecided,
        Stance::Against,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stance::For => "for",
            Stance::Against => "against",
            Stance::Mixed => "mixed",
            Stance::Undecided => "undecided",
        }
    }

    /// A stance as a debater may write it: the four words, and a few obvious synonyms.
    pub fn parse(text: &str) -> Option<Stance> {
        let word = text.trim().to_ascii_lowercase();
        Some(match word.as_str() {
            "for" | "pro" | "support" | "supports" | "yes" => Stance::For,
            "against" | "con" | "oppose" | "opposes" | "no" => Stance::Against,
            "mixed" | "partly" | "partial" | "both" => Stance::Mixed,
            "undecided" | "neutral" | "unsure" | "unknown" => Stance::Undecided,
            _ => return None,
        })
    }

    /// Where the stance sits on the axis the consensus score and the chart use: for is +1,
    /// against −1, mixed and undecided 0.
    pub fn sign(self) -> i32 {
        match self {
            Stance::For => 1,
            Stance::Against => -1,
            Stance::Mixed | Stance::Undecided => 0,
        }
    }
}

impl std::fmt::Display for Stance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A number from 0 to 1 in hundredths (a confidence, a consensus score): whole numbers keep
/// the arithmetic exact and the record's text the same on every machine.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Share(pub u8);

impl Share {
    pub const HALF: Share = Share(50);

    /// `0.7`, `0.65`, `1.0`, `0.0`.
    pub fn decimal(self) -> String {
        let n = self.0.min(100);
        match n {
            100 => "1.0".to_owned(),
            n if n % 10 == 0 => format!("0.{}", n / 10),
            n => format!("0.{n:02}"),
        }
    }

    pub fn as_f64(self) -> f64 {
        f64::from(self.0.min(100)) / 100.0
    }

    /// Reads `0.7`, `.7`, `1`, `70%`; clamps to 0..1 and rounds to hundredths. `None` for
    /// what is no number (or NaN).
    pub fn parse(text: &str) -> Option<Share> {
        let t = text.trim();
        let (t, scale) = match t.strip_suffix('%') {
            Some(p) => (p.trim_end(), 100.0),
            None => (t, 1.0),
        };
        let v: f64 = t.parse().ok()?;
        if v.is_nan() {
            return None;
        }
        let v = (v / scale).clamp(0.0, 1.0);
        Some(Share((v * 100.0).round() as u8))
    }
}

impl std::fmt::Display for Share {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.decimal())
    }
}

/// One open point at the end: the seat that holds it and the point.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenPoint {
    pub seat: String,
    pub text: String,
}

impl OpenPoint {
    /// `SEAT<TAB>TEXT` in a trailer (the tab is escaped there; a seat's name never holds one).
    pub fn encode(&self) -> String {
        format!("{}\t{}", self.seat.replace('\t', " "), self.text)
    }

    pub fn decode(text: &str) -> Option<OpenPoint> {
        let (seat, text) = text.split_once('\t')?;
        Some(OpenPoint {
            seat: seat.to_owned(),
            text: text.to_owned(),
        })
    }

    /// The label the synthesizer is asked to cite it by: `O1`, `O2`, …
    pub fn label(index: usize) -> String {
        format!("O{}", index + 1)
    }
}

/// What stopping at convergence would have saved, as the synthesis commit records it:
/// `round=2 phases=4 tokens=8123` (tokens only when every phase after it had a known cost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Saving {
    pub round: u32,
    pub phases: u32,
    pub tokens: Option<u64>,
}

impl Saving {
    pub fn encode(&self) -> String {
        let mut s = format!("round={} phases={}", self.round, self.phases);
        if let Some(t) = self.tokens {
            s.push_str(&format!(" tokens={t}"));
        }
        s
    }

    pub fn decode(text: &str) -> Option<Saving> {
        let mut out = Saving::default();
        let (mut round, mut phases) = (false, false);
        for part in text.split_whitespace() {
            let (k, v) = part.split_once('=')?;
            match k {
                "round" => {
                    out.round = v.parse().ok()?;
                    round = true;
                }
                "phases" => {
                    out.phases = v.parse().ok()?;
                    phases = true;
                }
                "tokens" => out.tokens = Some(v.parse().ok()?),
                _ => {}
            }
        }
        (round && phases).then_some(out)
    }
}

/// What a voter's ballot says (`--vote`, see `model::vote`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cast {
    /// Every seat shown, best first.
    Ranked(Vec<String>),
    /// Counted as an abstention, and why (no tag, a label not shown, one missing or twice).
    Abstained(String),
}

impl Default for Cast {
    fn default() -> Cast {
        Cast::Abstained(String::new())
    }
}

impl Cast {
    /// `ranked<TAB>SEAT<TAB>SEAT…` or `abstained<TAB>WHY` in a trailer (seats hold no tab).
    pub fn encode(&self) -> String {
        match self {
            Cast::Ranked(seats) => {
                let mut s = "ranked".to_owned();
                for seat in seats {
                    s.push('\t');
                    s.push_str(&seat.replace('\t', " "));
                }
                s
            }
            Cast::Abstained(why) => format!("abstained\t{why}"),
        }
    }

    pub fn decode(text: &str) -> Option<Cast> {
        let (kind, rest) = match text.split_once('\t') {
            Some((kind, rest)) => (kind, Some(rest)),
            None => (text, None),
        };
        match (kind, rest) {
            ("ranked", None) => Some(Cast::Ranked(Vec::new())),
            ("ranked", Some(rest)) => {
                Some(Cast::Ranked(rest.split('\t').map(str::to_owned).collect()))
            }
            ("abstained", rest) => Some(Cast::Abstained(rest.unwrap_or_default().to_owned())),
            _ => None,
        }
    }
}

/// A pair of a name and a value in one trailer, `NAME<TAB>VALUE`: a ballot's label and the
/// seat it stood for (`A`, `critic`), or a seat of the vote's result and its points
/// (`critic`, `3`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tabbed {
    pub name: String,
    pub value: String,
}

impl Tabbed {
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Tabbed {
        Tabbed {
            name: name.into(),
            value: value.into(),
        }
    }

    pub fn encode(&self) -> String {
        format!("{}\t{}", self.name.replace('\t', " "), self.value)
    }

    pub fn decode(text: &str) -> Option<Tabbed> {
        let (name, value) = text.split_once('\t')?;
        Some(Tabbed::new(name, value))
    }
}
