//! What phases cost, summed: in all, per agent that played them, and per model.
//!
//! Each phase records who played it and what it cost ([`Provenance`]): the host session (Claude
//! Code, from its transcript) or a seat's agent (from the agent's own report). A debate with
//! seats mixes agents and models, and some of them report a price while others report only
//! tokens. So a sum never carries one model's name (a line's total used to show the model of
//! its last phase over every agent's tokens): it carries the figures, how many phases they
//! cover and how many of those were priced, and the same figures per agent and per model,
//! which add up to it.

use crate::model::provenance::Provenance;
use crate::record::usage::Usd;

/// Figures of some phases: tokens, time, the price of those that report one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    pub phases: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub duration_ms: u64,
    /// The price of the phases that report one ([`Figures::priced`] of them).
    pub cost: Usd,
    pub priced: u32,
}

impl Figures {
    fn add(&mut self, p: &Provenance) {
        self.phases += 1;
        self.input_tokens += p.input_tokens;
        self.output_tokens += p.output_tokens;
        self.cache_read_tokens += p.cache_read_tokens;
        self.cache_write_tokens += p.cache_write_tokens;
        self.duration_ms += p.duration_ms.unwrap_or(0);
        if let Some(cost) = p.cost {
            self.cost.nanos += cost.nanos;
            self.priced += 1;
        }
    }

    fn merge(&mut self, other: &Figures) {
        self.phases += other.phases;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.duration_ms += other.duration_ms;
        self.cost.nanos += other.cost.nanos;
        self.priced += other.priced;
    }

    /// One line for people: `3 phases · 150 in, 50 out, 7 cache read, 3 cache write tokens ·
    /// 5.5 s · $0.0123`, the price saying how many phases it covers when not all.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{} phase{} · {} in, {} out, {} cache read, {} cache write tokens · {:.1} s",
            self.phases,
            if self.phases == 1 { "" } else { "s" },
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.duration_ms as f64 / 1000.0
        );
        match self.priced {
            0 => out.push_str(" · no price reported"),
            n if n == self.phases => out.push_str(&format!(" · {}", self.cost.human())),
            n => out.push_str(&format!(
                " · {} (priced phases: {n} of {})",
                self.cost.human(),
                self.phases
            )),
        }
        out
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "phases": self.phases,
            "tokens": {
                "input": self.input_tokens,
                "output": self.output_tokens,
                "cache_read": self.cache_read_tokens,
                "cache_write": self.cache_write_tokens,
            },
            "duration_ms": self.duration_ms,
            "cost_usd": (self.priced > 0).then(|| self.cost.as_f64()),
            "priced_phases": self.priced,
        })
    }
}

/// Who played a phase, as a sum names it: the agent of its seat, or the host.
pub fn player(p: &Provenance) -> String {
    match (&p.agent, &p.claude_version) {
        (Some(agent), _) => agent.clone(),
        (None, _) if p.host.is_some() => {
            let host = p.host.as_deref().unwrap_or_default();
            format!("{} (host)", host.split(' ').next().unwrap_or(host))
        }
        (None, Some(_)) => "claude (host)".to_owned(),
        (None, None) => "host".to_owned(),
    }
}

/// The model a sum files a phase under.
pub fn model(p: &Provenance) -> String {
    p.model
        .clone()
        .unwrap_or_else(|| "(model not reported)".to_owned())
}

/// What some phases cost in all, per player ([`player`]) and per model, each list sorted by
/// name and adding up to the total.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spend {
    pub total: Figures,
    pub by_player: Vec<(String, Figures)>,
    pub by_model: Vec<(String, Figures)>,
}

impl Spend {
    pub fn add(&mut self, p: &Provenance) {
        self.total.add(p);
        share(&mut self.by_player, player(p)).add(p);
        share(&mut self.by_model, model(p)).add(p);
    }

    pub fn merge(&mut self, other: &Spend) {
        self.total.merge(&other.total);
        for (name, figures) in &other.by_player {
            share(&mut self.by_player, name.clone()).merge(figures);
        }
        for (name, figures) in &other.by_model {
            share(&mut self.by_model, name.clone()).merge(figures);
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        let list = |shares: &[(String, Figures)], key: &str| {
            shares
                .iter()
                .map(|(name, f)| {
                    let mut item = f.to_json();
                    item[key] = name.clone().into();
                    item
                })
                .collect::<Vec<_>>()
        };
        let mut json = self.total.to_json();
        json["by_agent"] = list(&self.by_player, "agent").into();
        json["by_model"] = list(&self.by_model, "model").into();
        json
    }
}

/// The figures of `name` in `shares`, added in its place (by name) when missing.
fn share(shares: &mut Vec<(String, Figures)>, name: String) -> &mut Figures {
    let at = match shares.binary_search_by(|(n, _)| n.as_str().cmp(&name)) {
        Ok(at) => at,
        Err(at) => {
            shares.insert(at, (name, Figures::default()));
            at
        }
    };
    &mut shares[at].1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(agent: Option<&str>, model: &str, input: u64, cost: Option<u64>) -> Provenance {
        Provenance {
            agent: agent.map(str::to_owned),
            claude_version: agent.is_none().then(|| "2.1.197".to_owned()),
            model: Some(model.to_owned()),
            input_tokens: input,
            output_tokens: 1,
            duration_ms: Some(100),
            cost: cost.map(|nanos| Usd { nanos }),
            ..Provenance::default()
        }
    }

    #[test]
    fn a_mixed_debate_adds_up_per_player_and_per_model() {
        let mut spend = Spend::default();
        for p in [
            phase(None, "claude-opus", 300, Some(3_000_000)),
            phase(Some("codex"), "gpt-5.4", 1000, None),
            phase(None, "claude-opus", 200, Some(2_000_000)),
            phase(Some("qwen"), "qwen3", 50, None),
            phase(Some("claude"), "claude-opus", 10, Some(1_000_000)),
        ] {
            spend.add(&p);
        }
        assert_eq!(spend.total.input_tokens, 1560);
        assert_eq!((spend.total.phases, spend.total.priced), (5, 3));
        let names = |shares: &[(String, Figures)]| {
            shares
                .iter()
                .map(|(n, f)| (n.clone(), f.input_tokens))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&spend.by_player),
            [
                ("claude".to_owned(), 10),
                ("claude (host)".to_owned(), 500),
                ("codex".to_owned(), 1000),
                ("qwen".to_owned(), 50)
            ]
        );
        assert_eq!(
            names(&spend.by_model),
            [
                ("claude-opus".to_owned(), 510),
                ("gpt-5.4".to_owned(), 1000),
                ("qwen3".to_owned(), 50)
            ]
        );
        for shares in [&spend.by_player, &spend.by_model] {
            let mut sum = Figures::default();
            for (_, f) in shares {
                sum.merge(f);
            }
            assert_eq!(sum, spend.total);
        }
        assert_eq!(
            spend.total.summary(),
            "5 phases · 1560 in, 5 out, 0 cache read, 0 cache write tokens · 0.5 s · $0.0060 \
             (priced phases: 3 of 5)"
        );
        // Merging two lines' sums is summing their phases.
        let mut twice = spend.clone();
        twice.merge(&spend);
        assert_eq!(twice.total.input_tokens, 3120);
        assert_eq!(twice.by_model[0].1.input_tokens, 1020);
    }

    #[test]
    fn a_price_is_said_for_what_it_covers() {
        let mut f = Figures::default();
        f.add(&phase(Some("codex"), "m", 1, None));
        assert!(
            f.summary().ends_with("no price reported"),
            "{}",
            f.summary()
        );
        let mut f = Figures::default();
        f.add(&phase(None, "m", 1, Some(20_000_000)));
        assert!(f.summary().ends_with(" · $0.02"), "{}", f.summary());
        assert_eq!(f.to_json()["cost_usd"], 0.02);
    }
}
