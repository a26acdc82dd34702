//! track-upstream (under construction).
