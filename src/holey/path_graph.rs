//! The paths of every token from one entry set, shaped for the lexeme NFA.
//!
//! A hole of one token can be crossed along thousands of paths (every vocabulary token that
//! lexes there, by the terminals it completes and the configuration it leaves with): a chain of
//! states per path would make the automaton, and the search over it, grow with the vocabulary.
//! So the paths become a graph first:
//! - a *trie* over their terminal sequences, each node listing the exits of the paths that end
//!   there. The marked hole of a mask uses it: a node is one terminal sequence, so the private
//!   end state of each (node, exit) is exactly one path;
//! - its *minimal* form for every other hole: subtrees with the same exits and the same edges
//!   to the same subtrees merge (the classic minimization of an acyclic automaton, bottom up
//!   by signature), so paths that end alike share their states.

use hashbrown::HashMap;

use super::config::ConfigId;
use super::tokens::TokenPath;
use crate::grammar::TerminalId;

/// One state of a [`PathGraph`]: its terminal edges, and the paths that end here (their exit
/// configuration, and their index in the path list; `u32::MAX` once merged).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PathNode {
    pub edges: Vec<(TerminalId, u32)>,
    pub exits: Vec<(ConfigId, u32)>,
}

/// An acyclic automaton of terminal sequences with exits.
#[derive(Clone, Debug, Default)]
pub struct PathGraph {
    pub nodes: Vec<PathNode>,
    pub root: u32,
}

/// The paths of every token from one entry set, as a trie and a minimal graph.
#[derive(Clone, Debug, Default)]
pub struct TokenPaths {
    pub trie: PathGraph,
    pub dag: PathGraph,
}

impl TokenPaths {
    pub fn new(paths: Vec<TokenPath>) -> Self {
        let trie = trie(&paths);
        let dag = minimize(&trie);
        TokenPaths { trie, dag }
    }
}

/// The trie of `paths`' terminal sequences; node 0 is the root, children come after parents.
fn trie(paths: &[TokenPath]) -> PathGraph {
    let mut nodes = vec![PathNode::default()];
    let mut child: HashMap<(u32, TerminalId), u32> = HashMap::new();
    for (j, p) in paths.iter().enumerate() {
        let mut at = 0u32;
        for &t in &p.lexemes {
            at = *child.entry((at, t)).or_insert_with(|| {
                nodes.push(PathNode::default());
                let id = nodes.len() as u32 - 1;
                nodes[at as usize].edges.push((t, id));
                id
            });
        }
        nodes[at as usize].exits.push((p.exit, j as u32));
    }
    PathGraph { nodes, root: 0 }
}

/// Merges the trie's equivalent subtrees. Children come after parents in the trie, so a pass
/// from the last node to the first sees every child's class before its parent.
fn minimize(trie: &PathGraph) -> PathGraph {
    let n = trie.nodes.len();
    let mut class = vec![0u32; n];
    let mut ids: HashMap<PathNode, u32> = HashMap::new();
    let mut nodes: Vec<PathNode> = Vec::new();
    for i in (0..n).rev() {
        let node = &trie.nodes[i];
        let mut edges: Vec<(TerminalId, u32)> = node
            .edges
            .iter()
            .map(|&(t, c)| (t, class[c as usize]))
            .collect();
        edges.sort_unstable();
        let mut exits: Vec<(ConfigId, u32)> =
            node.exits.iter().map(|&(x, _)| (x, u32::MAX)).collect();
        exits.sort_unstable();
        exits.dedup();
        let signature = PathNode { edges, exits };
        class[i] = *ids.entry(signature.clone()).or_insert_with(|| {
            nodes.push(signature);
            nodes.len() as u32 - 1
        });
    }
    PathGraph {
        nodes,
        root: class[0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(lexemes: &[u32], exit: ConfigId) -> TokenPath {
        TokenPath {
            lexemes: lexemes.iter().map(|&t| TerminalId(t)).collect(),
            exit,
        }
    }

    /// Every (terminal sequence, exit) the graph spells from its root.
    fn spelled(g: &PathGraph) -> Vec<(Vec<u32>, ConfigId)> {
        let mut out = Vec::new();
        let mut stack = vec![(g.root, Vec::new())];
        while let Some((n, word)) = stack.pop() {
            let node = &g.nodes[n as usize];
            out.extend(node.exits.iter().map(|&(x, _)| (word.clone(), x)));
            for &(t, c) in &node.edges {
                let mut w = word.clone();
                w.push(t.0);
                stack.push((c, w));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn trie_and_minimal_graph_spell_the_same_paths() {
        let paths = vec![
            path(&[], 7),
            path(&[1], 3),
            path(&[1, 2], 3),
            path(&[2, 2], 3),
            path(&[2], 3),
            path(&[1, 1, 2], 5),
            path(&[2, 1, 2], 5),
        ];
        let tp = TokenPaths::new(paths.clone());
        let mut expected: Vec<(Vec<u32>, ConfigId)> = paths
            .iter()
            .map(|p| (p.lexemes.iter().map(|t| t.0).collect(), p.exit))
            .collect();
        expected.sort();
        assert_eq!(spelled(&tp.trie), expected);
        assert_eq!(spelled(&tp.dag), expected);
        assert!(tp.dag.nodes.len() < tp.trie.nodes.len());
        // In the trie each (node, exit) names one path.
        for node in &tp.trie.nodes {
            for &(x, j) in &node.exits {
                assert_eq!(paths[j as usize].exit, x);
            }
        }
    }
}
