//! anvil: structured AI debates inside Claude Code, every phase recorded in git.
