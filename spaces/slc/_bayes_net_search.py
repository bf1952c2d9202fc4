"""Structure search for WEKA's BayesNet: Bayes score and the six local search methods.

WEKA's ``bayes.net.search.local`` package, with the settings the thesis (and Auto-WEKA) fix:

* nodes are the discretised attributes plus the class (the last node); every search starts
  from the naive-Bayes graph (class → every attribute);
* the score is WEKA's ``BAYES`` local score: a Bayesian-Dirichlet marginal likelihood with a
  constant prior count alpha = 0.5 per cell, on *unweighted* counts (as WEKA's
  ``calcNodeScorePlain``); configurations never observed contribute exactly 0; a single-valued
  node (an attribute MDL left in one bin) scores exactly 0 and a single-valued extra parent
  exactly the node's current score, as in WEKA, where both come out bit-identical (otherwise
  rounding of order 1e-14 would "improve" the score with such arcs: K2 would spend a parent
  slot on a constant attribute, and every one-bin node would get a parent);
* ``K2`` (data order, class first), ``HillClimber``, ``LAGDHillClimber`` (2 look-ahead steps,
  5 good operations) and ``TabuSearch`` (10 runs, tabu list 5) allow at most
  ``max_parents = 2`` parents including the class, and use arc addition and deletion (WEKA's
  default: no arc reversal); ``TAN`` is WEKA's score-weighted maximum spanning tree over the
  attributes; ``SimulatedAnnealing`` has no parent limit (T0 = 10, factor 0.999, 10,000 runs).

Scores are memoised per (node, parent set), and the score of a node with every possible extra
parent is one ``bincount`` over the data (:meth:`ScoreData.scores_with_extra_parent`), so the
searches stay fast for ~100 attributes. Every loop is bounded and checks the evaluation deadline.
"""
from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from ggp_automl.spaces.deadline import check_deadline

_NEG = -1e100  # WEKA's "no operation" score


def joint_codes(train_cols: np.ndarray, cards, test_cols: np.ndarray | None = None):
    """Compressed joint configuration codes of several discrete columns.

    Returns ``(train_codes, n_configs, test_codes)``: train codes in ``[0, n_configs)``;
    test codes use the same numbering, with -1 for a configuration never seen in training.
    """
    n = train_cols.shape[0]
    tr = np.zeros(n, dtype=np.int64)
    te = None if test_cols is None else np.zeros(test_cols.shape[0], dtype=np.int64)
    size = 1
    for j, card in enumerate(cards):
        card = int(card)
        tr = tr * card + train_cols[:, j]
        if te is not None:
            te = np.where(te < 0, -1, te * card + test_cols[:, j])
        size *= card
        if size > 2 ** 40:
            tr, te, size = _compress(tr, te)
    if size > 4 * n:  # keep tables small: renumber to the observed configurations
        tr, te, size = _compress(tr, te)
    return tr, size, te


def _compress(tr, te):
    uniq, tr = np.unique(tr, return_inverse=True)
    if te is not None:
        pos = np.searchsorted(uniq, te)
        pos_c = np.minimum(pos, uniq.size - 1)
        te = np.where((te >= 0) & (uniq[pos_c] == te), pos_c, -1)
    return tr.astype(np.int64), te, int(uniq.size)


def bd_score(counts: np.ndarray, alpha: float) -> float:
    """WEKA ``BAYES`` score of a (configs × values) count table."""
    r = counts.shape[1]
    totals = counts.sum(axis=1)
    return float((gammaln(alpha + counts) - gammaln(alpha)).sum()
                 + (gammaln(r * alpha) - gammaln(r * alpha + totals)).sum())


class ScoreData:
    """Discrete data (columns = nodes, the class last) with memoised local scores."""

    def __init__(self, Z: np.ndarray, cards: np.ndarray, alpha: float = 0.5):
        self.Z = np.ascontiguousarray(Z, dtype=np.int64)
        self.cards = np.asarray(cards, dtype=np.int64)
        self.alpha = float(alpha)
        self.n, self.n_nodes = self.Z.shape
        self.offsets = np.concatenate([[0], np.cumsum(self.cards)[:-1]]).astype(np.int64)
        self.n_values = int(self.cards.sum())
        self._shifted = self.Z + self.offsets[None, :]      # global value index per cell
        self._node_memo: dict = {}
        self._row_memo: dict = {}

    def _configs(self, parents):
        parents = sorted(parents)
        if not parents:
            return np.zeros(self.n, dtype=np.int64), 1
        codes, size, _ = joint_codes(self.Z[:, parents], self.cards[parents])
        return codes, size

    def node_score(self, node: int, parents) -> float:
        key = (node, frozenset(parents))
        hit = self._node_memo.get(key)
        if hit is not None:
            return hit
        r = int(self.cards[node])
        if r == 1:           # a single-valued node: every term cancels, WEKA's sum is exactly 0
            score = 0.0
        else:
            cfg, size = self._configs(parents)
            counts = np.bincount(cfg * r + self.Z[:, node], minlength=size * r).reshape(size, r)
            score = bd_score(counts, self.alpha)
        self._node_memo[key] = score
        return score

    def scores_with_extra_parent(self, node: int, parents) -> np.ndarray:
        """Score of ``node`` with parents ``parents ∪ {j}`` for every node j (-inf if invalid)."""
        key = (node, frozenset(parents))
        hit = self._row_memo.get(key)
        if hit is not None:
            return hit
        r = int(self.cards[node])
        if r == 1:
            scores = np.zeros(self.n_nodes)
        else:
            cfg, size = self._configs(parents)
            a = self.alpha
            idx = (cfg[:, None] * self.n_values + self._shifted) * r + self.Z[:, node][:, None]
            counts = np.bincount(idx.ravel(), minlength=size * self.n_values * r)
            counts = counts.reshape(size, self.n_values, r).astype(float)
            per_value = ((gammaln(a + counts) - gammaln(a)).sum(axis=2)
                         + gammaln(r * a) - gammaln(r * a + counts.sum(axis=2)))
            scores = np.add.reduceat(per_value.sum(axis=0), self.offsets)
            # a single-valued extra parent leaves the count table as it is: WEKA scores it
            # bit-identically (a tie, never an improvement); the sum above differs by rounding
            scores[self.cards == 1] = self.node_score(node, parents)
        scores[node] = -np.inf
        for p in parents:
            scores[p] = -np.inf
        self._row_memo[key] = scores
        return scores


# --------------------------------------------------------------------------- graph state

class Network:
    """Parent (and child) sets of a DAG over ``n_nodes`` nodes, with cycle checks."""

    def __init__(self, n_nodes: int, class_node: int, naive_bayes: bool = True):
        self.n_nodes = n_nodes
        self.class_node = class_node
        self.parents: list[set[int]] = [set() for _ in range(n_nodes)]
        self.children: list[set[int]] = [set() for _ in range(n_nodes)]
        if naive_bayes:
            for i in range(n_nodes):
                if i != class_node:
                    self.add(class_node, i)
        self._reach = None

    def copy_parents(self) -> list[set[int]]:
        return [set(p) for p in self.parents]

    def add(self, tail: int, head: int) -> None:
        self.parents[head].add(tail)
        self.children[tail].add(head)
        self._reach = None

    def delete(self, tail: int, head: int) -> None:
        self.parents[head].discard(tail)
        self.children[tail].discard(head)
        self._reach = None

    def adjacency(self) -> np.ndarray:
        """``A[t, h]`` = arc t → h."""
        A = np.zeros((self.n_nodes, self.n_nodes), dtype=bool)
        for h, ps in enumerate(self.parents):
            A[list(ps), h] = True
        return A

    def reach(self) -> np.ndarray:
        """``R[u, v]`` = there is a directed path u ⇝ v (length >= 1)."""
        if self._reach is None:
            R = self.adjacency().astype(np.int32)
            for _ in range(self.n_nodes):                  # squaring: O(log depth) products
                nxt = ((R + R @ R) > 0).astype(np.int32)
                if np.array_equal(nxt, R):
                    break
                R = nxt
            self._reach = R.astype(bool)
        return self._reach

    def creates_cycle(self, tail: int, head: int) -> bool:
        """Would the arc tail → head close a directed cycle (is tail reachable from head)?"""
        if tail == head:
            return True
        stack, seen = [head], {head}
        while stack:
            for v in self.children[stack.pop()]:
                if v == tail:
                    return True
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        return False

    def is_dag(self) -> bool:
        return not self.reach().diagonal().any()


# --------------------------------------------------------------------------- K2 and TAN

def search_k2(data: ScoreData, class_node: int, max_parents: int = 2) -> list[set[int]]:
    """WEKA K2: class first, then attributes in data order; greedy best extra parent from the
    predecessors while it improves the node score and the parent limit allows it."""
    net = Network(data.n_nodes, class_node)
    order = [class_node] + [i for i in range(data.n_nodes) if i != class_node]
    for pos in range(1, len(order)):
        check_deadline()
        node = order[pos]
        best = data.node_score(node, net.parents[node])
        while len(net.parents[node]) < max_parents:
            cand = data.scores_with_extra_parent(node, net.parents[node])
            preds = np.asarray(order[:pos])
            vals = cand[preds]
            k = int(np.argmax(vals))
            if not vals[k] > best:
                break
            net.add(int(preds[k]), node)
            best = float(vals[k])
    return net.parents


def search_tan(data: ScoreData, class_node: int) -> list[set[int]]:
    """WEKA TAN: naive Bayes plus a spanning tree over the attributes grown Prim-style by the
    score gain of an extra parent, arcs directed as WEKA does (each node one tree parent)."""
    n = data.n_nodes
    net = Network(n, class_node)
    atts = [i for i in range(n) if i != class_node]
    if len(atts) < 2:
        return net.parents
    base = np.array([data.node_score(i, net.parents[i]) for i in range(n)])
    gain = np.full((n, n), -np.inf)                    # gain[head, tail]
    for h in atts:
        check_deadline()
        gain[h] = data.scores_with_extra_parent(h, net.parents[h]) - base[h]
    gain[:, class_node] = -np.inf
    gain[class_node, :] = -np.inf
    np.fill_diagonal(gain, -np.inf)
    linked = np.zeros(n, dtype=bool)
    links: list[tuple[int, int]] = []                  # (link1 = tail, link2 = head) as WEKA
    for it in range(len(atts) - 1):
        if it == 0:
            cand = gain
        else:
            ok = linked[:, None] ^ linked[None, :]     # exactly one end already linked
            cand = np.where(ok, gain, -np.inf)
        flat = int(np.argmax(cand))                    # first maximum, head-major as WEKA
        head, tail = divmod(flat, n)
        links.append((tail, head))
        linked[head] = linked[tail] = True
    has_parent = np.zeros(n, dtype=bool)
    for link1, link2 in links:
        if not has_parent[link1]:
            net.add(link2, link1)
            has_parent[link1] = True
        else:
            net.add(link1, link2)
            has_parent[link2] = True
    return net.parents


# --------------------------------------------------------------------------- hill climbers

ADD, DEL = 0, 1


class _LocalSearch:
    """WEKA ``HillClimber`` machinery: cached add/delete gains, best (non-tabu) operation."""

    def __init__(self, data: ScoreData, class_node: int, max_parents: int):
        self.data = data
        self.max_parents = max_parents
        self.net = Network(data.n_nodes, class_node)
        n = data.n_nodes
        self.add_gain = np.full((n, n), -np.inf)       # [head, tail]
        self.del_gain = np.full((n, n), -np.inf)       # [head, tail]
        self.node_scores = np.zeros(n)
        for h in range(n):
            self._update(h)

    def _update(self, head: int) -> None:
        check_deadline()
        ps = self.net.parents[head]
        base = self.data.node_score(head, ps)
        self.node_scores[head] = base
        if len(ps) < self.max_parents:
            self.add_gain[head] = self.data.scores_with_extra_parent(head, ps) - base
        else:
            self.add_gain[head] = -np.inf
        self.del_gain[head] = -np.inf
        for t in ps:
            self.del_gain[head, t] = self.data.node_score(head, ps - {t}) - base

    def total_score(self) -> float:
        return float(self.node_scores.sum())

    def operations(self):
        """All valid operations as (gain, kind, tail, head), in WEKA's scan order."""
        n = self.data.n_nodes
        reach = self.net.reach()
        full = np.array([len(p) >= self.max_parents for p in self.net.parents])
        # add tail → head: head not full, no arc yet, head does not reach tail
        valid_add = ~full[:, None] & ~reach & np.isfinite(self.add_gain)
        np.fill_diagonal(valid_add, False)
        heads, tails = np.nonzero(valid_add)
        ops = [(self.add_gain[h, t], ADD, int(t), int(h)) for h, t in zip(heads, tails)]
        for h in range(n):
            for t in sorted(self.net.parents[h]):
                ops.append((self.del_gain[h, t], DEL, t, h))
        return ops

    def best_operation(self, tabu=()):
        """Best valid operation (first in scan order on ties) that is not tabu, or None."""
        n = self.data.n_nodes
        reach = self.net.reach()
        full = np.array([len(p) >= self.max_parents for p in self.net.parents])
        add = np.where(~full[:, None] & ~reach, self.add_gain, -np.inf)
        np.fill_diagonal(add, -np.inf)
        dele = self.del_gain
        for kind, t, h in tabu:
            if kind == ADD:
                add = add.copy() if add is self.add_gain else add
                add[h, t] = -np.inf
            else:
                dele = dele.copy() if dele is self.del_gain else dele
                dele[h, t] = -np.inf
        best = None
        flat = int(np.argmax(add))
        h, t = divmod(flat, n)
        if np.isfinite(add[h, t]) and add[h, t] > _NEG:
            best = (float(add[h, t]), ADD, t, h)
        flat = int(np.argmax(dele))
        h, t = divmod(flat, n)
        if np.isfinite(dele[h, t]) and dele[h, t] > _NEG and (best is None or dele[h, t] > best[0]):
            best = (float(dele[h, t]), DEL, t, h)
        return best

    def perform(self, op) -> None:
        _, kind, tail, head = op
        if kind == ADD:
            self.net.add(tail, head)
        else:
            self.net.delete(tail, head)
        self._update(head)

    def undo(self, op) -> None:
        _, kind, tail, head = op
        self.perform((0.0, DEL if kind == ADD else ADD, tail, head))


def _iteration_cap(n_nodes: int) -> int:
    return 4 * n_nodes * n_nodes + 100


def search_hill_climber(data: ScoreData, class_node: int, max_parents: int = 2) -> list[set[int]]:
    """WEKA HillClimber: apply the best add/delete while it improves the score."""
    ls = _LocalSearch(data, class_node, max_parents)
    for _ in range(_iteration_cap(data.n_nodes)):
        op = ls.best_operation()
        if op is None or not op[0] > 0:
            break
        ls.perform(op)
    return ls.net.parents


def search_tabu(data: ScoreData, class_node: int, max_parents: int = 2, runs: int = 10,
                tabu_length: int = 5) -> list[set[int]]:
    """WEKA TabuSearch: ``runs`` best non-tabu steps (also worsening ones); keep the best net."""
    ls = _LocalSearch(data, class_node, max_parents)
    best_score, best_parents = ls.total_score(), ls.net.copy_parents()
    tabu: list[tuple[int, int, int]] = []
    for _ in range(runs):
        op = ls.best_operation(tabu)
        if op is None:
            break
        ls.perform(op)
        tabu.append((op[1], op[2], op[3]))
        tabu = tabu[-tabu_length:]
        score = ls.total_score()
        if score > best_score:
            best_score, best_parents = score, ls.net.copy_parents()
    return best_parents


def search_lagd(data: ScoreData, class_node: int, max_parents: int = 2, look_ahead: int = 2,
                n_good: int = 5) -> list[set[int]]:
    """WEKA LAGDHillClimber: apply the best sequence of ``look_ahead`` operations built from the
    ``n_good`` best operations per step while its total gain is positive, then reduce the depth;
    finish with greedy hill climbing."""
    ls = _LocalSearch(data, class_node, max_parents)

    def good_operations():
        ops = ls.operations()
        order = sorted(range(len(ops)), key=lambda k: -ops[k][0])   # stable: scan order on ties
        return [ops[k] for k in order[:n_good]]

    def optimal_sequence(depth: int):
        if depth == 1:
            return [ls.best_operation()]
        best_total, best_seq = 0.0, [None] * depth
        for op in good_operations():
            ls.perform(op)
            rest = optimal_sequence(depth - 1)
            ls.undo(op)
            total = op[0] + sum(o[0] for o in rest if o is not None)
            if total > best_total:
                best_total, best_seq = total, [op] + rest
        return best_seq

    cap = _iteration_cap(data.n_nodes)
    depth = look_ahead
    while depth > 1:
        for _ in range(cap):
            check_deadline()
            seq = optimal_sequence(depth)
            if any(o is None for o in seq) or not sum(o[0] for o in seq) > 0:
                break
            for o in seq:
                ls.perform(o)
        depth -= 1
    for _ in range(cap):
        op = ls.best_operation()
        if op is None or not op[0] > 0:
            break
        ls.perform(op)
    return ls.net.parents


def search_simulated_annealing(data: ScoreData, class_node: int, random_state=None,
                               t_start: float = 10.0, delta: float = 0.999,
                               runs: int = 10000) -> list[set[int]]:
    """WEKA SimulatedAnnealing: random arc add/delete accepted when T·ln(u) < gain; no parent
    limit. Keeps the best network seen (WEKA forgets to update its best score; fixed here)."""
    rng = np.random.default_rng(random_state)
    n = data.n_nodes
    net = Network(n, class_node)
    base = np.array([data.node_score(i, net.parents[i]) for i in range(n)])
    current = float(base.sum())
    best_score, best_parents = current, net.copy_parents()
    temp = t_start
    for run in range(runs):
        if run % 64 == 0:
            check_deadline()
        for _attempt in range(100 * n * n):
            tail, head = (int(v) for v in rng.integers(0, n, size=2))
            if tail == head:
                continue
            u = rng.integers(0, 10000) / 10000.0 + 1e-100
            if tail in net.parents[head]:
                new_ps = net.parents[head] - {tail}
                score = data.node_score(head, new_ps)
                gain = score - base[head]
                if temp * np.log(u) < gain:
                    net.delete(tail, head)
                    base[head] = score
                    current += gain
                break
            if not net.creates_cycle(tail, head):
                score = data.node_score(head, net.parents[head] | {tail})
                gain = score - base[head]
                if temp * np.log(u) < gain:
                    net.add(tail, head)
                    base[head] = score
                    current += gain
                break
        if current > best_score:
            best_score, best_parents = current, net.copy_parents()
        temp *= delta
    return best_parents


SEARCHES = ("TAN", "K2", "HillClimber", "LAGDHillClimber", "SimulatedAnnealing", "TabuSearch")


def search_structure(method: str, data: ScoreData, class_node: int, max_parents: int = 2,
                     random_state=None) -> list[set[int]]:
    """Parent sets found by the named WEKA search method."""
    if method == "TAN":
        return search_tan(data, class_node)
    if method == "K2":
        return search_k2(data, class_node, max_parents)
    if method == "HillClimber":
        return search_hill_climber(data, class_node, max_parents)
    if method == "LAGDHillClimber":
        return search_lagd(data, class_node, max_parents)
    if method == "TabuSearch":
        return search_tabu(data, class_node, max_parents)
    if method == "SimulatedAnnealing":
        return search_simulated_annealing(data, class_node, random_state)
    raise ValueError(f"unknown BayesNet search method {method!r}; expected one of {SEARCHES}")
