//! Which token sequences a text holds in a row: a suffix automaton over the text's tokens, built
//! in time linear in the text, answers each question in time linear in the question. The leak
//! check asks it for each of the fix's added lines; searching the text once per line instead took
//! a minute on a 20,000-line fix and a 1.6 MB issue (docs/benchmarks/leak-check.md).

use std::collections::HashMap;

/// The token runs of one text.
pub struct TokenRuns<'a> {
    /// Each distinct token of the text, by its number.
    ids: HashMap<&'a str, u32>,
    states: Vec<State>,
}

/// A state of the automaton: the longest run it stands for, its suffix link and its moves.
struct State {
    len: usize,
    link: Option<usize>,
    next: HashMap<u32, usize>,
}

impl<'a> TokenRuns<'a> {
    /// The automaton of `tokens`, the text's tokens in order.
    pub fn new(tokens: impl IntoIterator<Item = &'a str>) -> TokenRuns<'a> {
        let mut runs =
            TokenRuns { ids: HashMap::new(), states: vec![State { len: 0, link: None, next: HashMap::new() }] };
        let mut last = 0;
        for t in tokens {
            let fresh = u32::try_from(runs.ids.len()).expect("fewer than 2^32 distinct tokens");
            let id = *runs.ids.entry(t).or_insert(fresh);
            last = runs.extend(last, id);
        }
        runs
    }

    /// Whether `run` appears in the text, token after token (an empty run always does).
    pub fn contains<'b>(&self, run: impl IntoIterator<Item = &'b str>) -> bool {
        let mut state = 0;
        for t in run {
            let Some(next) = self.ids.get(t).and_then(|id| self.states[state].next.get(id)) else { return false };
            state = *next;
        }
        true
    }

    /// Adds token `id` after the state `last` of the whole text so far; the new whole text's state.
    fn extend(&mut self, last: usize, id: u32) -> usize {
        let cur = self.states.len();
        self.states.push(State { len: self.states[last].len + 1, link: Some(0), next: HashMap::new() });
        let mut p = Some(last);
        while let Some(s) = p.filter(|&s| !self.states[s].next.contains_key(&id)) {
            self.states[s].next.insert(id, cur);
            p = self.states[s].link;
        }
        let Some(p) = p else { return cur };
        let q = self.states[p].next[&id];
        if self.states[p].len + 1 == self.states[q].len {
            self.states[cur].link = Some(q);
            return cur;
        }
        let clone = self.states.len();
        let copy = State { len: self.states[p].len + 1, link: self.states[q].link, next: self.states[q].next.clone() };
        self.states.push(copy);
        let mut r = Some(p);
        while let Some(s) = r.filter(|&s| self.states[s].next.get(&id) == Some(&q)) {
            self.states[s].next.insert(id, clone);
            r = self.states[s].link;
        }
        self.states[q].link = Some(clone);
        self.states[cur].link = Some(clone);
        cur
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run of every length of a small text is found, and runs it does not hold are not.
    #[test]
    fn runs_are_found_exactly_when_the_text_holds_them() {
        let text: Vec<&str> = "a b a b b a c a b a".split(' ').collect();
        let runs = TokenRuns::new(text.iter().copied());
        let words = ["a", "b", "c", "d"];
        // Every sequence of up to five tokens over the alphabet, against a plain search.
        let mut all: Vec<Vec<&str>> = vec![vec![]];
        for _ in 0..5 {
            let longer: Vec<Vec<&str>> =
                all.iter().flat_map(|s| words.iter().map(move |w| [s.as_slice(), &[*w]].concat())).collect();
            for s in &longer {
                let plain = text.windows(s.len()).any(|w| w == s.as_slice());
                assert_eq!(runs.contains(s.iter().copied()), plain, "{s:?}");
            }
            all = longer;
        }
        assert!(runs.contains([]));
    }
}
