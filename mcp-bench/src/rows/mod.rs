//! One module per group of quality.md's rows.

pub(crate) mod calls;
pub(crate) mod era;
pub(crate) mod events;
pub(crate) mod gateway;
pub(crate) mod http;
pub(crate) mod identity;
pub(crate) mod input_round;
pub(crate) mod memory;
pub(crate) mod naming;
pub(crate) mod pool;
pub(crate) mod sharing;
pub(crate) mod skills;
pub(crate) mod startup;
