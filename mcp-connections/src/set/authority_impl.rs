//! Replacing the host's authority of a running set.

use crate::policy::authority::HostAuthority;
use crate::set::ConnectionSet;
use std::sync::Arc;

impl ConnectionSet {
    /// Replaces the host's authority (approval and elicitation policies, permission
    /// profiles, reviewer) at once, for every later decision of this set; servers keep
    /// running. A request already being reviewed or shown to the user is not recalled.
    /// Carried over by [`ConnectionSet::replace`].
    ///
    /// The elicitation capability is announced in `initialize` when the set starts a
    /// connection with a handler or a reviewer; a reviewer given only later reaches
    /// servers whose connection announced it.
    pub fn set_authority(&self, authority: HostAuthority) {
        self.inner.authority.store(authority);
    }

    /// The host's current authority.
    pub fn authority(&self) -> Arc<HostAuthority> {
        self.inner.authority.load()
    }
}
