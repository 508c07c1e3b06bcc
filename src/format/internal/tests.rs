//! Unit tests of the internal-topic decoders.
