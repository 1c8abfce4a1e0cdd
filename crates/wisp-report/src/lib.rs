//! wisp-report
