//! [`Spool`]: bytes appended to an unnamed temporary file and read back by their place, so that a
//! command streaming records keeps the place of each ([`Slot`]), not the record: publish's
//! records, curate's split lines, its duplicate finder's shingle sets.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

/// Where appended bytes are in a [`Spool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Bytes before them.
    pub offset: u64,
    /// Their length.
    pub len: usize,
}

/// Bytes in an unnamed temporary file (made at the first append, gone when the spool is dropped
/// or the process dies), appended one piece after another and read back by [`Slot`].
#[derive(Debug, Default)]
pub struct Spool {
    file: Option<File>,
    end: u64,
}

impl Spool {
    /// An empty spool; no file is made until something is appended.
    pub fn new() -> Spool {
        Spool::default()
    }

    /// Appends `bytes`; where they are.
    pub fn push(&mut self, bytes: &[u8]) -> io::Result<Slot> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        file.write_all(bytes)?;
        let slot = Slot { offset: self.end, len: bytes.len() };
        self.end += bytes.len() as u64;
        Ok(slot)
    }

    /// The bytes appended at `slot`.
    pub fn read(&self, slot: Slot) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; slot.len];
        if slot.len > 0 {
            let file = self.file.as_ref().ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "nothing spooled"))?;
            file.read_exact_at(&mut buf, slot.offset)?;
        }
        Ok(buf)
    }

    /// Bytes appended so far.
    pub fn len(&self) -> u64 {
        self.end
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.end == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_come_back_by_their_place_in_any_order() {
        let mut spool = Spool::new();
        assert!(spool.is_empty());
        let pieces: Vec<Vec<u8>> = (0..200u32).map(|i| vec![(i % 251) as u8; (i as usize * 37) % 500]).collect();
        let slots: Vec<Slot> = pieces.iter().map(|p| spool.push(p).unwrap()).collect();
        assert_eq!(spool.len(), pieces.iter().map(|p| p.len() as u64).sum::<u64>());
        for (slot, piece) in slots.iter().zip(&pieces).rev() {
            assert_eq!(&spool.read(*slot).unwrap(), piece);
        }
        assert_eq!(Spool::new().read(Slot { offset: 0, len: 0 }).unwrap(), Vec::<u8>::new());
        assert!(Spool::new().read(Slot { offset: 0, len: 3 }).is_err());
    }
}
