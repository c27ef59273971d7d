// Finding subgraphs, choosing what to exclude as MXNet does
// (src/operator/subgraph/build_subgraph.cc, LabelSubgraph):
//  - a candidate grows breadth-first from the seed through SelectInput and
//    SelectOutput, never into variables, earlier subgraphs or nodes
//    excluded for this seed;
//  - its boundary is the unclaimed outside nodes next to it. A boundary
//    node both fed by and feeding the candidate closes a cycle; so does a
//    boundary node feeding the candidate that is reachable, avoiding the
//    candidate, from a boundary node that only consumes from it;
//  - of all such cycles, the member with the largest id that consumes the
//    cycle's last outside node is excluded, and the candidate regrows.
// MXNet aborts when that member is the seed; here the largest member
// feeding the cycle's first outside node is excluded instead. Each attempt
// costs the candidate's edges plus one forward sweep (not one search per
// pair of boundary nodes); a seed takes one attempt per excluded node.
// After Filter, a piece that lost nodes is re-checked (CycleTargets).
// Finally the contracted graph is checked for cycles between subgraphs
// (MXNet ignores earlier subgraphs when checking, so two subgraphs can
// still form one); a subgraph on such a cycle is dissolved.
#include <algorithm>
#include <functional>
#include <queue>

#include "absl/strings/str_cat.h"
#include "subgraph/partition_internal.h"

namespace mx {
namespace partition_internal {

Adjacency::Adjacency(const IndexedGraph& idx) {
  const uint32_t n = static_cast<uint32_t>(idx.num_nodes());
  in_begin.assign(n + 1, 0);
  data_in_end.assign(n, 0);
  is_var.assign(n, false);
  std::vector<uint32_t> out_count(n + 1, 0);
  for (uint32_t v = 0; v < n; ++v) {
    const auto& info = idx[v];
    is_var[v] = info.source->is_variable();
    in_begin[v] = static_cast<uint32_t>(in_list.size());
    for (const auto& e : info.inputs) in_list.push_back(e.node_id);
    data_in_end[v] = static_cast<uint32_t>(in_list.size());
    for (uint32_t c : info.control_deps) in_list.push_back(c);
  }
  in_begin[n] = static_cast<uint32_t>(in_list.size());
  // Consumers without repeats: a producer appears once per consumer.
  std::vector<uint32_t> last(n, UINT32_MAX);
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t k = in_begin[v]; k < in_begin[v + 1]; ++k) {
      const uint32_t u = in_list[k];
      if (last[u] != v) {
        last[u] = v;
        ++out_count[u + 1];
      }
    }
  }
  out_begin.assign(n + 1, 0);
  for (uint32_t v = 0; v < n; ++v)
    out_begin[v + 1] = out_begin[v] + out_count[v + 1];
  out_list.assign(out_begin[n], 0);
  std::vector<uint32_t> fill(out_begin.begin(), out_begin.end() - 1);
  std::fill(last.begin(), last.end(), UINT32_MAX);
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t k = in_begin[v]; k < in_begin[v + 1]; ++k) {
      const uint32_t u = in_list[k];
      if (last[u] != v) {
        last[u] = v;
        out_list[fill[u]++] = v;
      }
    }
  }
}

namespace {

using MinHeap =
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>>;

class Finder {
 public:
  Finder(const IndexedGraph& idx, const Adjacency& adj,
         const SubgraphProperty& property)
      : idx_(idx),
        adj_(adj),
        property_(property),
        n_(static_cast<uint32_t>(idx.num_nodes())),
        in_c_(n_, 0),
        tainted_(n_, 0),
        queued_(n_, 0),
        excluded_(n_, 0),
        boundary_(n_, 0),
        swept_(n_, 0),
        last_consumer_(n_, -1),
        last_producer_(n_, -1),
        first_producer_(n_, -1) {
    found_.label.assign(n_, -1);
  }

  Found Run() {
    SubgraphSelectorPtr selector;
    for (uint32_t s = 0; s < n_; ++s) {
      if (adj_.is_var[s] || found_.label[s] != -1) continue;
      if (selector == nullptr) selector = property_.CreateSubgraphSelector();
      if (!selector->Select(*idx_[s].source)) continue;
      GrowFromSeed(s, std::move(selector));
      selector = nullptr;  // Selectors may keep per-seed state.
    }
    DissolveCycles();
    return std::move(found_);
  }

 private:
  const Node& node(uint32_t v) const { return *idx_[v].source; }
  bool Free(uint32_t v) const {
    return !adj_.is_var[v] && found_.label[v] == -1 &&
           excluded_[v] != seed_epoch_;
  }
  void Exclude(uint32_t v) {
    if (excluded_[v] == seed_epoch_) return;
    excluded_[v] = seed_epoch_;
    seed_excluded_.push_back(v);
  }

  // Grows a candidate from `s`, excluding nodes that would close a cycle
  // and regrowing, until none does. Returns the members, sorted.
  std::vector<uint32_t> Grow(uint32_t s, SubgraphSelectorPtr* sel) {
    while (true) {
      std::vector<uint32_t> members = Label(s, **sel);
      const int excluded = CycleBreaker(s, members);
      if (excluded < 0) {
        std::sort(members.begin(), members.end());
        return members;
      }
      Exclude(static_cast<uint32_t>(excluded));
      // MXNet resets the selector before regrowing; a fresh one that has
      // seen the seed is the same for selectors without state.
      *sel = property_.CreateSubgraphSelector();
      (*sel)->Select(node(s));
    }
  }

  // One breadth-first growth from `s`; members are marked in_c_ == cur_.
  std::vector<uint32_t> Label(uint32_t s, SubgraphSelector& sel) {
    const uint32_t a = cur_ = ++epoch_;
    std::vector<uint32_t> members{s};
    in_c_[s] = a;
    for (size_t head = 0; head < members.size(); ++head) {
      const uint32_t v = members[head];
      for (uint32_t k = adj_.in_begin[v]; k < adj_.data_in_end[v]; ++k) {
        const uint32_t u = adj_.in_list[k];
        if (Free(u) && in_c_[u] != a && sel.SelectInput(node(v), node(u))) {
          in_c_[u] = a;
          members.push_back(u);
        }
      }
      for (uint32_t k = adj_.out_begin[v]; k < adj_.out_begin[v + 1]; ++k) {
        const uint32_t w = adj_.out_list[k];
        if (Free(w) && in_c_[w] != a && sel.SelectOutput(node(v), node(w))) {
          in_c_[w] = a;
          members.push_back(w);
        }
      }
    }
    return members;
  }

  // The member MXNet excludes to break a cycle through the boundary of the
  // candidate `members` grown from `s`, or -1 when there is none.
  int CycleBreaker(uint32_t s, const std::vector<uint32_t>& members) {
    const uint32_t a = cur_, b = ++epoch_;
    std::vector<uint32_t> boundary;
    auto touch = [&](uint32_t x) {
      if (boundary_[x] == b) return;
      boundary_[x] = b;
      last_consumer_[x] = last_producer_[x] = -1;
      boundary.push_back(x);
    };
    uint32_t hi = 0;
    for (uint32_t v : members) {
      hi = std::max(hi, v);
      const int iv = static_cast<int>(v);
      for (uint32_t k = adj_.in_begin[v]; k < adj_.in_begin[v + 1]; ++k) {
        const uint32_t u = adj_.in_list[k];
        if (in_c_[u] == a || adj_.is_var[u] || found_.label[u] >= 0) continue;
        touch(u);
        last_consumer_[u] = std::max(last_consumer_[u], iv);
      }
      for (uint32_t k = adj_.out_begin[v]; k < adj_.out_begin[v + 1]; ++k) {
        const uint32_t w = adj_.out_list[k];
        if (in_c_[w] == a || found_.label[w] >= 0) continue;
        touch(w);
        last_producer_[w] = std::max(last_producer_[w], iv);
      }
    }
    // Sweep forward, avoiding members, from boundary nodes that only
    // consume from the candidate; first_producer_ keeps the largest
    // last_producer_ of the sources reaching a node.
    MinHeap sweep;
    for (uint32_t x : boundary) {
      if (last_producer_[x] >= 0 && last_consumer_[x] < 0 && x < hi) {
        swept_[x] = b;
        first_producer_[x] = last_producer_[x];
        sweep.push(x);
      }
    }
    while (!sweep.empty()) {
      const uint32_t x = sweep.top();
      sweep.pop();
      for (uint32_t k = adj_.out_begin[x]; k < adj_.out_begin[x + 1]; ++k) {
        const uint32_t c = adj_.out_list[k];
        if (in_c_[c] == a || c >= hi) continue;
        if (swept_[c] != b) {
          swept_[c] = b;
          first_producer_[c] = first_producer_[x];
          sweep.push(c);
        } else {
          first_producer_[c] = std::max(first_producer_[c], first_producer_[x]);
        }
      }
    }
    int excluded = -1;
    for (uint32_t x : boundary) {
      if (last_consumer_[x] < 0) continue;
      const bool fed = last_producer_[x] >= 0, reached = swept_[x] == b;
      if (!fed && !reached) continue;
      int pick = last_consumer_[x];
      if (pick == static_cast<int>(s)) {
        pick = std::max(fed ? last_producer_[x] : -1,
                        reached ? first_producer_[x] : -1);
      }
      excluded = std::max(excluded, pick);
    }
    return excluded;
  }

  // Members with a producer outside `members` that is reachable from
  // `members` (each closes a cycle). Visits only nodes before the last
  // member.
  std::vector<uint32_t> CycleTargets(const std::vector<uint32_t>& members) {
    const uint32_t a = ++epoch_;
    for (uint32_t v : members) in_c_[v] = a;
    const uint32_t hi = members.back();
    std::vector<uint32_t> stack;
    for (uint32_t v : members) {
      for (uint32_t k = adj_.out_begin[v]; k < adj_.out_begin[v + 1]; ++k) {
        const uint32_t c = adj_.out_list[k];
        if (c < hi && in_c_[c] != a && tainted_[c] != a) {
          tainted_[c] = a;
          stack.push_back(c);
        }
      }
    }
    while (!stack.empty()) {
      const uint32_t x = stack.back();
      stack.pop_back();
      for (uint32_t k = adj_.out_begin[x]; k < adj_.out_begin[x + 1]; ++k) {
        const uint32_t c = adj_.out_list[k];
        if (c < hi && in_c_[c] != a && tainted_[c] != a) {
          tainted_[c] = a;
          stack.push_back(c);
        }
      }
    }
    std::vector<uint32_t> targets;
    for (uint32_t v : members) {
      for (uint32_t k = adj_.in_begin[v]; k < adj_.in_begin[v + 1]; ++k) {
        if (tainted_[adj_.in_list[k]] == a) {
          targets.push_back(v);
          break;
        }
      }
    }
    return targets;
  }

  // Connected pieces of `nodes` (sorted), each sorted.
  std::vector<std::vector<uint32_t>> Split(const std::vector<uint32_t>& nodes) {
    const uint32_t a = ++epoch_;
    for (uint32_t v : nodes) in_c_[v] = a;
    std::vector<std::vector<uint32_t>> pieces;
    for (uint32_t v : nodes) {
      if (queued_[v] == a) continue;
      pieces.emplace_back();
      std::vector<uint32_t> stack{v};
      queued_[v] = a;
      while (!stack.empty()) {
        const uint32_t x = stack.back();
        stack.pop_back();
        pieces.back().push_back(x);
        auto visit = [&](uint32_t y) {
          if (in_c_[y] == a && queued_[y] != a) {
            queued_[y] = a;
            stack.push_back(y);
          }
        };
        for (uint32_t k = adj_.in_begin[x]; k < adj_.data_in_end[x]; ++k) {
          visit(adj_.in_list[k]);
        }
        for (uint32_t k = adj_.out_begin[x]; k < adj_.out_begin[x + 1]; ++k) {
          visit(adj_.out_list[k]);
        }
      }
      std::sort(pieces.back().begin(), pieces.back().end());
    }
    return pieces;
  }

  void GrowFromSeed(uint32_t s, SubgraphSelectorPtr sel) {
    seed_epoch_ = ++epoch_;
    seed_excluded_.clear();
    const std::vector<uint32_t> members = Grow(s, &sel);
    std::vector<uint32_t> kept = ApplyFilter(members, *sel);
    std::vector<std::vector<uint32_t>> work = Split(kept);
    const size_t first_group = found_.groups.size();
    while (!work.empty()) {
      std::vector<uint32_t> piece = std::move(work.back());
      work.pop_back();
      if (piece.size() != members.size()) {
        // Dropping nodes can open a path around the rest: check again.
        std::vector<uint32_t> targets = CycleTargets(piece);
        if (!targets.empty()) {
          std::vector<uint32_t> rest;
          std::set_difference(piece.begin(), piece.end(), targets.begin(),
                              targets.end(), std::back_inserter(rest));
          for (uint32_t t : targets) Exclude(t);
          for (auto& p : Split(rest)) work.push_back(std::move(p));
          continue;
        }
      }
      const int label = static_cast<int>(found_.groups.size());
      for (uint32_t v : piece) found_.label[v] = label;
      found_.groups.push_back(std::move(piece));
      found_.excluded.emplace_back();
    }
    if (found_.groups.size() > first_group) {
      found_.excluded[first_group] = seed_excluded_;
    }
    // Pieces were produced out of order; keep groups ordered by first node.
    std::sort(found_.groups.begin() + first_group, found_.groups.end());
    for (size_t g = first_group; g < found_.groups.size(); ++g) {
      for (uint32_t v : found_.groups[g]) found_.label[v] = static_cast<int>(g);
    }
  }

  std::vector<uint32_t> ApplyFilter(const std::vector<uint32_t>& members,
                                    SubgraphSelector& sel) {
    std::vector<const Node*> cands;
    for (uint32_t v : members) cands.push_back(&node(v));
    std::vector<const Node*> kept_nodes = sel.Filter(cands);
    if (kept_nodes.size() == cands.size() &&
        std::equal(kept_nodes.begin(), kept_nodes.end(), cands.begin())) {
      return members;
    }
    const uint32_t a = ++epoch_;
    for (uint32_t v : members) in_c_[v] = a;
    std::vector<uint32_t> kept;
    for (const Node* n : kept_nodes) {
      uint32_t v = UINT32_MAX;
      try {
        v = idx_.node_id(n);
      } catch (const NotFound&) {
      }
      if (v == UINT32_MAX || in_c_[v] != a) {
        throw InvalidArgument(
            absl::StrCat("subgraph property \"", property_.name(),
                         "\": Filter returned "
                         "node \"",
                         n == nullptr ? "(null)" : n->name(),
                         "\", which is not among the candidates it was given"));
      }
      in_c_[v] = 0;  // Drops repeats.
      kept.push_back(v);
    }
    std::sort(kept.begin(), kept.end());
    return kept;
  }

  // Strongly connected components of the graph with each group contracted
  // to one unit; in every component with more than one unit, the group
  // formed last is dissolved. Repeats until no cycle is left (rare: the
  // growth checks see earlier groups as units already).
  void DissolveCycles() {
    const size_t g = found_.groups.size();
    const uint32_t total = n_ + static_cast<uint32_t>(g);
    while (true) {
      auto rep = [&](uint32_t v) {
        const int l = found_.label[v];
        return l < 0 ? v : n_ + static_cast<uint32_t>(l);
      };
      // Successor lists of units (CSR).
      std::vector<uint32_t> begin(total + 1, 0), succ;
      std::vector<std::pair<uint32_t, uint32_t>> edges;
      for (uint32_t v = 0; v < n_; ++v) {
        const uint32_t rv = rep(v);
        for (uint32_t k = adj_.in_begin[v]; k < adj_.in_begin[v + 1]; ++k) {
          const uint32_t ru = rep(adj_.in_list[k]);
          if (ru != rv) edges.emplace_back(ru, rv);
        }
      }
      for (const auto& e : edges) ++begin[e.first + 1];
      for (uint32_t u = 0; u < total; ++u) begin[u + 1] += begin[u];
      succ.resize(edges.size());
      std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
      for (const auto& e : edges) succ[fill[e.first]++] = e.second;
      // Iterative Tarjan.
      const uint32_t kNone = UINT32_MAX;
      std::vector<uint32_t> index(total, kNone), low(total, 0),
          comp(total, kNone);
      std::vector<bool> on_stack(total, false);
      std::vector<uint32_t> stack;
      std::vector<std::pair<uint32_t, uint32_t>> call;  // (unit, next edge)
      uint32_t counter = 0, num_comps = 0;
      std::vector<int> victim;  // Per component: latest group, or -1.
      std::vector<uint32_t> comp_size;
      for (uint32_t root = 0; root < total; ++root) {
        if (index[root] != kNone) continue;
        call.emplace_back(root, begin[root]);
        index[root] = low[root] = counter++;
        stack.push_back(root);
        on_stack[root] = true;
        while (!call.empty()) {
          auto& [u, e] = call.back();
          if (e < begin[u + 1]) {
            const uint32_t w = succ[e++];
            if (index[w] == kNone) {
              index[w] = low[w] = counter++;
              stack.push_back(w);
              on_stack[w] = true;
              call.emplace_back(w, begin[w]);
            } else if (on_stack[w]) {
              low[u] = std::min(low[u], index[w]);
            }
            continue;
          }
          const uint32_t done = u;
          call.pop_back();
          if (!call.empty()) {
            low[call.back().first] =
                std::min(low[call.back().first], low[done]);
          }
          if (low[done] != index[done]) continue;
          victim.push_back(-1);
          comp_size.push_back(0);
          uint32_t w;
          do {
            w = stack.back();
            stack.pop_back();
            on_stack[w] = false;
            comp[w] = num_comps;
            ++comp_size.back();
            if (w >= n_) victim.back() = std::max<int>(victim.back(), w - n_);
          } while (w != done);
          ++num_comps;
        }
      }
      bool dissolved = false;
      for (uint32_t c = 0; c < num_comps; ++c) {
        if (comp_size[c] < 2 || victim[c] < 0) continue;
        const int l = victim[c];
        found_.notes.push_back(absl::StrCat(
            "subgraph starting at \"", node(found_.groups[l][0]).name(),
            "\" dissolved: it formed a cycle with another subgraph"));
        for (uint32_t v : found_.groups[l]) found_.label[v] = -1;
        found_.groups[l].clear();
        dissolved = true;
      }
      if (!dissolved) break;
    }
    // Drop dissolved groups, renumbering labels.
    std::vector<std::vector<uint32_t>> groups, excluded;
    for (size_t l = 0; l < found_.groups.size(); ++l) {
      if (found_.groups[l].empty()) continue;
      for (uint32_t v : found_.groups[l]) {
        found_.label[v] = static_cast<int>(groups.size());
      }
      groups.push_back(std::move(found_.groups[l]));
      excluded.push_back(std::move(found_.excluded[l]));
    }
    found_.groups = std::move(groups);
    found_.excluded = std::move(excluded);
  }

  const IndexedGraph& idx_;
  const Adjacency& adj_;
  const SubgraphProperty& property_;
  const uint32_t n_;
  // Epoch-stamped marks: equal to the current epoch means "set".
  uint32_t epoch_ = 0, seed_epoch_ = 0, cur_ = 0;
  std::vector<uint32_t> in_c_, tainted_, queued_, excluded_;
  std::vector<uint32_t> boundary_, swept_;
  // Per boundary node (valid while boundary_ / swept_ is current): the
  // largest member it feeds, the largest member feeding it, and the largest
  // member feeding a sweep source that reaches it; -1 for none.
  std::vector<int> last_consumer_, last_producer_, first_producer_;
  std::vector<uint32_t> seed_excluded_;
  Found found_;
};

}  // namespace

Found FindSubgraphs(const IndexedGraph& idx, const Adjacency& adj,
                    const SubgraphProperty& property) {
  return Finder(idx, adj, property).Run();
}

}  // namespace partition_internal
}  // namespace mx
