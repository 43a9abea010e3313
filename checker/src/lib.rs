//! Histories and checkers (being written).
