//! What the host decides about servers: its authority over elicitation and approvals
//! ([`authority`], [`approvals`], [`elicitation`]) and the host's model ([`sampling`]), the hooks that see every call
//! ([`hooks`]), the metadata it gives servers ([`host_meta`]), and tool pinning ([`pins`],
//! [`drift`]). Never imports the set: the set applies these.

pub(crate) mod approvals;
pub(crate) mod approver;
pub(crate) mod authority;
pub(crate) mod drift;
pub(crate) mod elicitation;
pub(crate) mod hooks;
pub(crate) mod host_meta;
pub(crate) mod pins;
pub(crate) mod sampling;
pub(crate) mod skill_loading;
