//! Near-duplicate fix patches (backports and cherry-picks: Multi-SWE-bench shipped groups of
//! logstash PRs with identical patches). A fix patch is reduced to the tokens of its changed lines
//! (file names, `diff`/`index`/`@@` headers and whitespace dropped, so line numbers, moved
//! directories and re-indentation do not matter), cut into shingles of `SHINGLE` tokens; two
//! instances are duplicates when the Jaccard similarity of their shingle sets reaches the threshold.
//! Identical patches are grouped first by a hash of all their tokens; near-duplicates are found by
//! prefix filtering over shingles ordered rarest first, so the cost grows with the number of
//! plausible pairs, not with the square of the dataset. Groups are the connected components.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use swe_forge_core::{DiffLine, Instance, ValidationStatus, diff_lines};

/// Tokens per shingle.
const SHINGLE: usize = 5;

/// How duplicates are found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DedupOptions {
    /// Smallest Jaccard similarity (0 to 1) of two fix patches' shingle sets that makes them
    /// duplicates.
    pub threshold: f64,
}

impl Default for DedupOptions {
    fn default() -> DedupOptions {
        DedupOptions { threshold: 0.8 }
    }
}

/// One group of instances with (nearly) the same fix patch.
#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateGroup {
    /// The instance kept: accepted before anything else, then the earliest merged, then the lowest
    /// PR number, then the smallest instance id.
    pub kept: String,
    /// The others, each with its similarity to the kept one, by instance id.
    pub duplicates: Vec<(String, f64)>,
}

/// Finds the groups of near-duplicate fix patches; instances in no group are left out.
pub fn find_duplicates(records: &[Instance], options: DedupOptions) -> Vec<DuplicateGroup> {
    let mut finder = DuplicateFinder::default();
    for r in records {
        finder.add(r);
    }
    finder.groups(options)
}

/// [`find_duplicates`] over records seen one at a time: [`DuplicateFinder::add`] keeps a small
/// summary of each (its id, what picks the member to keep, the hash of its patch's tokens). The
/// shingle hashes of each distinct fix patch go to an unnamed temporary file, and how often each
/// shingle occurs is counted in a sketch of fixed size, so memory holds a few dozen bytes per
/// record and a sixth of each distinct patch's shingles while the groups are found.
#[derive(Debug, Default)]
pub struct DuplicateFinder {
    entries: Vec<Entry>,
    /// The first record of each distinct token sequence, by its hash.
    first_of: HashMap<u64, usize>,
    /// Where the sorted shingle hashes of each representative (the first record of its patch)
    /// are in `spool`: offset and count.
    sets: HashMap<usize, (u64, u32), ByValue>,
    spool: Spool,
    /// How many representatives hold each shingle, about.
    counts: CountMin,
}

/// What dedup keeps of one record.
#[derive(Debug)]
struct Entry {
    id: String,
    /// `keep_order` without the id.
    order: (bool, bool, String, u64),
    /// The record whose shingles are this one's (itself or the first with the same tokens);
    /// None for a patch without changed lines.
    representative: Option<usize>,
}

impl DuplicateFinder {
    /// Takes note of the next record.
    pub fn add(&mut self, r: &Instance) {
        let i = self.entries.len();
        let t = tokens(&r.fix_patch);
        let representative = if t.is_empty() {
            None
        } else {
            match self.first_of.entry(hash(&t)) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(i);
                    let mut set: Vec<u64> = shingles(&r.fix_patch).into_iter().collect();
                    set.sort_unstable();
                    for &s in &set {
                        self.counts.add(s);
                    }
                    self.sets.insert(i, (self.spool.push(&set), set.len() as u32));
                    Some(i)
                }
            }
        };
        let (accepted, undated, merged, number, _) = keep_order(r);
        self.entries.push(Entry {
            id: r.instance_id.clone(),
            order: (accepted, undated, merged, number),
            representative,
        });
    }

    /// The groups of the records added, as [`find_duplicates`] gives them.
    pub fn groups(self, options: DedupOptions) -> Vec<DuplicateGroup> {
        let DuplicateFinder { entries, sets, spool, counts, .. } = self;
        let set = |i: usize| -> Vec<u64> { sets.get(&i).map_or_else(Vec::new, |&(at, n)| spool.read(at, n)) };
        let mut parent: Vec<usize> = (0..entries.len()).collect();
        let mut representatives = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            match e.representative {
                Some(r) if r == i => representatives.push(i),
                Some(r) => union(&mut parent, r, i),
                None => {}
            }
        }
        // Near-duplicates among the representatives, by prefix filtering (the exact "all pairs"
        // method): with shingles in one global order, two sets with Jaccard >= t share one of the
        // first |A| - ceil(t|A|) + 1 shingles of each, so only those are indexed. The order is
        // rarest first (the sketch's count, then the hash: a total order, so the method stays
        // exact), which keeps common shingles out of the prefixes and the candidates few.
        let t = options.threshold.clamp(0.01, 1.0);
        let mut prefixes: Vec<(u64, u32)> = Vec::new();
        for &i in &representatives {
            let mut ordered: Vec<(u32, u64)> = set(i).into_iter().map(|s| (counts.estimate(s), s)).collect();
            ordered.sort_unstable();
            let prefix = ordered.len() - (t * ordered.len() as f64).ceil() as usize + 1;
            prefixes.extend(ordered.into_iter().take(prefix).map(|(_, s)| (s, i as u32)));
        }
        prefixes.sort_unstable();
        let mut candidates: HashSet<(usize, usize)> = HashSet::new();
        for holders in prefixes.chunk_by(|a, b| a.0 == b.0) {
            for (k, &(_, a)) in holders.iter().enumerate() {
                for &(_, b) in &holders[k + 1..] {
                    candidates.insert((a.min(b) as usize, a.max(b) as usize));
                }
            }
        }
        drop(prefixes);
        tracing::debug!(
            representatives = representatives.len(),
            candidates = candidates.len(),
            "dedup: candidate pairs"
        );
        let len = |i: usize| sets.get(&i).map_or(0, |&(_, n)| n) as f64;
        for (i, j) in candidates {
            let (a, b) = (len(i), len(j));
            if a.min(b) >= t * a.max(b) && jaccard(&set(i), &set(j)) >= options.threshold {
                union(&mut parent, i, j);
            }
        }
        let mut components: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for i in 0..entries.len() {
            let root = find(&mut parent, i);
            components.entry(root).or_default().push(i);
        }
        let set_of = |i: usize| entries[i].representative.map_or_else(Vec::new, set);
        let mut groups: Vec<DuplicateGroup> = components
            .into_values()
            .filter(|members| members.len() > 1)
            .map(|mut members| {
                let key = |i: usize| (&entries[i].order, &entries[i].id);
                members.sort_by(|&a, &b| key(a).cmp(&key(b)));
                let kept = members[0];
                let kept_set = set_of(kept);
                let mut duplicates: Vec<(String, f64)> = members[1..]
                    .iter()
                    .map(|&m| (entries[m].id.clone(), round3(jaccard(&kept_set, &set_of(m)))))
                    .collect();
                duplicates.sort_by(|a, b| a.0.cmp(&b.0));
                DuplicateGroup { kept: entries[kept].id.clone(), duplicates }
            })
            .collect();
        groups.sort_by(|a, b| a.kept.cmp(&b.kept));
        groups
    }
}

/// Sorted shingle sets in a [`swe_forge_fs::Spool`]; kept in memory instead when it fails (no
/// temporary file can be made).
#[derive(Debug, Default)]
struct Spool {
    file: swe_forge_fs::Spool,
    /// Every set, from the start, once the file failed.
    memory: Option<Vec<u64>>,
    /// Sets written, in hashes.
    len: u64,
}

impl Spool {
    /// Appends `set`; returns where it starts (in hashes).
    fn push(&mut self, set: &[u64]) -> u64 {
        let at = self.len;
        self.len += set.len() as u64;
        if self.memory.is_none() {
            let bytes: Vec<u8> = set.iter().flat_map(|s| s.to_le_bytes()).collect();
            if self.file.push(&bytes).is_ok() {
                return at;
            }
            // From now on in memory, the sets written so far included.
            let written = swe_forge_fs::Slot { offset: 0, len: (at * 8) as usize };
            self.memory = Some(hashes(&self.file.read(written).unwrap_or_default()));
        }
        self.memory.get_or_insert_default().extend_from_slice(set);
        at
    }

    /// The `n` hashes written at `at`.
    fn read(&self, at: u64, n: u32) -> Vec<u64> {
        let (start, n) = (at as usize, n as usize);
        match &self.memory {
            Some(m) => m.get(start..start + n).map(<[u64]>::to_vec).unwrap_or_default(),
            None => {
                let slot = swe_forge_fs::Slot { offset: at * 8, len: n * 8 };
                hashes(&self.file.read(slot).unwrap_or_default())
            }
        }
    }
}

fn hashes(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()
}

/// A count-min sketch of shingle counts: four rows of 2^20 counters (16 MiB once used); a
/// count is never under the true one.
#[derive(Debug, Default)]
struct CountMin {
    rows: Vec<u32>,
}

impl CountMin {
    const WIDTH: usize = 1 << 20;
    const DEPTH: usize = 4;

    fn cells(s: u64) -> [usize; Self::DEPTH] {
        std::array::from_fn(|row| {
            row * Self::WIDTH
                + (mix(s ^ (row as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)) as usize & (Self::WIDTH - 1))
        })
    }

    fn add(&mut self, s: u64) {
        if self.rows.is_empty() {
            self.rows = vec![0; Self::WIDTH * Self::DEPTH];
        }
        for c in Self::cells(s) {
            self.rows[c] = self.rows[c].saturating_add(1);
        }
    }

    fn estimate(&self, s: u64) -> u32 {
        if self.rows.is_empty() {
            return 0;
        }
        Self::cells(s).into_iter().map(|c| self.rows[c]).min().unwrap_or(0)
    }
}

/// splitmix64's finaliser: the sketch's rows each see the shingle hash mixed with a seed of
/// their own.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Sort key of the member to keep (smallest first).
fn keep_order(r: &Instance) -> (bool, bool, String, u64, String) {
    let merged = r.swe_forge.as_ref().and_then(|m| m.merged_at.as_ref()).map(|t| t.as_str().to_owned());
    (
        r.status() != ValidationStatus::Accepted,
        merged.is_none(),
        merged.unwrap_or_default(),
        r.number,
        r.instance_id.clone(),
    )
}

fn union(parent: &mut [usize], i: usize, j: usize) {
    let (ri, rj) = (find(parent, i), find(parent, j));
    if ri != rj {
        parent[ri.max(rj)] = ri.min(rj);
    }
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A set of shingle hashes. The values are hashes already, so they are their own hash.
type Shingles = HashSet<u64, ByValue>;

type ByValue = BuildHasherDefault<ValueHasher>;

/// Hashes a u64 to itself.
#[derive(Default)]
struct ValueHasher(u64);

impl Hasher for ValueHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Jaccard similarity of two sorted sets of shingle hashes (two empty sets are not similar).
fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    inter as f64 / (a.len() + b.len() - inter) as f64
}

/// The shingle set of a fix patch: hashes of `SHINGLE` consecutive tokens of its changed lines
/// (each line's tokens prefixed by its sign, so moving a line from removed to added matters).
fn shingles(patch: &str) -> Shingles {
    let tokens = tokens(patch);
    let mut out = Shingles::default();
    if tokens.is_empty() {
        return out;
    }
    if tokens.len() < SHINGLE {
        out.insert(hash(&tokens));
        return out;
    }
    for w in tokens.windows(SHINGLE) {
        out.insert(hash(w));
    }
    out
}

/// FNV-1a over the tokens, each followed by a separator byte; stable across runs and builds.
fn hash(tokens: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in tokens {
        for &b in t.as_bytes().iter().chain([&0xffu8]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Tokens of the changed lines: runs of word characters, and single punctuation characters.
fn tokens(patch: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (_, line) in diff_lines(patch) {
        let (sign, body) = match line {
            DiffLine::Added(body) => ("+", body),
            DiffLine::Removed(body) => ("-", body),
            _ => continue,
        };
        if body.trim().is_empty() {
            continue;
        }
        out.push(sign);
        let mut start: Option<usize> = None;
        for (i, c) in body.char_indices() {
            let word = c.is_alphanumeric() || c == '_';
            match (word, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    out.push(&body[s..i]);
                    start = None;
                }
                _ => {}
            }
            if !word && !c.is_whitespace() {
                out.push(&body[i..i + c.len_utf8()]);
            }
        }
        if let Some(s) = start {
            out.push(&body[s..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, number: u64, fix: &str) -> Instance {
        let mut r = swe_forge_test_support::record("o", "r", number);
        r.instance_id = id.into();
        r.fix_patch = fix.into();
        r
    }

    const FIX: &str = "diff --git a/src/main/java/Pipeline.java b/src/main/java/Pipeline.java\nindex 1..2 100644\n--- a/src/main/java/Pipeline.java\n+++ b/src/main/java/Pipeline.java\n@@ -10,7 +10,8 @@ class Pipeline {\n     void run() {\n-        if (queue.isEmpty()) return;\n+        if (queue == null || queue.isEmpty()) {\n+            return;\n+        }\n         queue.drain(this::flush);\n";

    #[test]
    fn the_sketch_never_counts_under_and_the_spool_gives_back_each_set() {
        let mut counts = CountMin::default();
        let mut spool = Spool::default();
        let mut truth: HashMap<u64, u32> = HashMap::new();
        let mut sets = Vec::new();
        for i in 0..2000u64 {
            let set: Vec<u64> = (0..(i % 7 + 1)).map(|k| mix(i / 3 * 31 + k)).collect();
            for &s in &set {
                counts.add(s);
                *truth.entry(s).or_default() += 1;
            }
            sets.push((spool.push(&set), set));
        }
        assert!(truth.iter().all(|(s, n)| counts.estimate(*s) >= *n));
        assert_eq!(truth.iter().filter(|(s, n)| counts.estimate(**s) == **n).count(), truth.len(), "no collision here");
        for (at, set) in &sets {
            assert_eq!(&spool.read(*at, set.len() as u32), set);
        }
    }

    #[test]
    fn backports_with_moved_files_and_reindentation_are_grouped() {
        // The same change on a release branch: other path, other line numbers, other indentation.
        let backport = FIX
            .replace("src/main/java/", "logstash-core/src/")
            .replace("@@ -10,7 +10,8 @@", "@@ -212,7 +212,8 @@")
            .replace("        ", "    ");
        let other = "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-return nil\n+return fmt.Errorf(\"empty stack\")\n";
        let records = vec![record("o__r-30", 30, FIX), record("o__r-12", 12, &backport), record("o__r-40", 40, other)];
        let groups = find_duplicates(&records, DedupOptions::default());
        assert_eq!(groups, [DuplicateGroup { kept: "o__r-12".into(), duplicates: vec![("o__r-30".into(), 1.0)] }]);
    }

    #[test]
    fn a_different_fix_in_the_same_place_is_not_a_duplicate() {
        let similar = FIX.replace("queue == null || queue.isEmpty()", "queue.size() == 0 && !force");
        let sorted = |p: &str| {
            let mut v: Vec<u64> = shingles(p).into_iter().collect();
            v.sort_unstable();
            v
        };
        let s = jaccard(&sorted(FIX), &sorted(&similar));
        assert!(s < 0.8, "{s}");
        let records = vec![record("o__r-1", 1, FIX), record("o__r-2", 2, &similar), record("o__r-3", 3, "")];
        assert!(find_duplicates(&records, DedupOptions::default()).is_empty());
    }

    #[test]
    fn a_large_group_of_copies_is_found() {
        let mut records: Vec<Instance> = (1..=300).map(|n| record(&format!("o__r-{n}"), n, FIX)).collect();
        records.push(record("o__r-999", 999, &FIX.replace("queue == null", "queue != null")));
        let groups = find_duplicates(&records, DedupOptions::default());
        assert_eq!(groups.len(), 1);
        assert_eq!((groups[0].kept.as_str(), groups[0].duplicates.len()), ("o__r-1", 299));
    }

    #[test]
    fn the_accepted_earliest_member_is_kept() {
        let mut a = record("o__r-5", 5, FIX);
        let mut b = record("o__r-9", 9, FIX);
        let c = record("o__r-1", 1, FIX);
        for (r, day) in [(&mut a, "2024-03-01"), (&mut b, "2023-01-01")] {
            let mut meta = swe_forge_core::ForgeMeta::new(ValidationStatus::Accepted);
            meta.merged_at = Some(swe_forge_core::Timestamp::parse(&format!("{day}T00:00:00Z")).unwrap());
            r.swe_forge = Some(meta);
        }
        let groups = find_duplicates(&[a, b, c], DedupOptions::default());
        assert_eq!(groups[0].kept, "o__r-9");
        assert_eq!(groups[0].duplicates.iter().map(|d| d.0.as_str()).collect::<Vec<_>>(), ["o__r-1", "o__r-5"]);
    }
}
