// What the two Symbol JSON targets do with a document.
#ifndef MXCORE_FUZZ_SYMBOL_CHECKS_H_
#define MXCORE_FUZZ_SYMBOL_CHECKS_H_

#include <string>

#include "base/error.h"
#include "fuzz/fuzz_util.h"
#include "graph/graph.h"
#include "graph/pass.h"
#include "graph/symbol.h"

namespace mx {
namespace fuzz {

// FromJSON; for a document that loads, ToJSON must round-trip exactly
// (FromJSON(ToJSON(s)).ToJSON() == ToJSON(s)), and the listing functions,
// Print, ToDOT and InferShape/InferType must answer or raise mx::Error.
inline void CheckSymbolJSON(const std::string& json) {
  Guard([&] {
    Symbol s = Symbol::FromJSON(json);
    std::string out;
    bool saved = false;
    Guard([&] {
      out = s.ToJSON();
      saved = true;
    });
    if (saved) {
      std::string again;
      try {
        again = Symbol::FromJSON(out).ToJSON();
      } catch (const mx::Error& e) {
        Finding("ToJSON output does not load", e.what());
      }
      if (again != out) Finding("ToJSON round trip differs", out + "\n---\n" + again);
    }
    Guard([&] { s.ListArguments(); });
    Guard([&] { s.ListAuxiliaryStates(); });
    Guard([&] { s.ListOutputNames(); });
    Guard([&] { s.GetInternals(); });
    Guard([&] { s.Print(); });
    Guard([&] { s.ToDOT(); });
    Guard([&] { ApplyPasses(Graph(s), {"InferShape", "InferType"}); });
  });
}

}  // namespace fuzz
}  // namespace mx

#endif  // MXCORE_FUZZ_SYMBOL_CHECKS_H_
