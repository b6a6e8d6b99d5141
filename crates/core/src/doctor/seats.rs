//! Which agents could take a seat here (see [`crate::agent`]). Not part of [`super::examine`]:
//! it runs each agent's `--version`, which only `anvil doctor` itself should pay for.

use super::{Finding, Level};
use crate::agent::Readiness;

/// One finding per agent (why one cannot run quotes it: cleaned of credentials first).
pub fn seats() -> Vec<Finding> {
    let mut intake = crate::model::secrets::Intake::default();
    crate::seat::check_all(&mut intake)
        .iter()
        .map(finding)
        .collect()
}

pub(crate) fn finding(r: &Readiness) -> Finding {
    let name = r.agent.name();
    if let Some(endpoint) = r.agent.endpoint() {
        // anvil plays it itself: what matters is its key (whether it answers, `anvil seats`
        // asks, over the network, which doctor does not).
        let at = endpoint.base_url();
        return match &r.headless {
            Ok(how) => Finding::new(
                "seats",
                "seat",
                Level::Ok,
                format!("{name} (endpoint {at}) can take a seat ({how})"),
            ),
            Err(missing) => Finding::new(
                "seats",
                "seat",
                Level::Note,
                format!("{name} (endpoint {at}) cannot take a seat yet: {missing}"),
            )
            .hint(format!(
                "only needed for `--seat ROLE={name}:MODEL` ({}); `anvil seats` asks whether it \
                 answers",
                endpoint.hint()
            )),
        };
    }
    match (&r.version, &r.headless) {
        (Ok(version), Ok(how)) => Finding::new(
            "seats",
            "seat",
            Level::Ok,
            format!("{name} {version} can take a seat headless ({how})"),
        ),
        (Ok(version), Err(missing)) => Finding::new(
            "seats",
            "seat",
            Level::Note,
            format!("{name} {version} is installed but may not run headless: {missing}"),
        ),
        (Err(e), _) => Finding::new(
            "seats",
            "seat",
            Level::Note,
            format!("{name} cannot take a seat: {e}"),
        )
        .hint(format!(
            "only needed for `--seat ROLE={name}`; {} is installed from its own package",
            r.agent.title()
        )),
    }
}
