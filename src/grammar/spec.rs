//! Grammar specs (in progress).
