// The fuzz vocabulary: every attribute name the registered ops declare is
// reachable by op_attrs_fuzzer (which picks a key with a byte below 240),
// listed once, after the fixed list the committed corpus indexes.
#include "fuzz/vocab.h"

#include <set>

#include "gtest/gtest.h"

namespace mx {
namespace fuzz {
namespace {

TEST(Vocab, KeysCoverEveryDeclaredAttributeOnce) {
  const std::vector<std::string>& keys = AttrKeys();
  EXPECT_LT(keys.size(), 240u);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(),
            keys.size());
  for (const std::string& op : OpRegistry::Get()->ListNames()) {
    for (const Op::ParamInfo& p : OpRegistry::Get()->Lookup(op).params()) {
      EXPECT_NE(std::find(keys.begin(), keys.end(), p.name), keys.end())
          << op << "." << p.name;
    }
  }
  // The fixed list comes first: the corpus's key indices keep their keys.
  EXPECT_EQ(keys[0], "a_max");
  EXPECT_EQ(keys[115], "size");
}

TEST(Vocab, WordsHoldEveryEnumeratedValue) {
  const std::vector<std::string>& words = AttrWords();
  const std::set<std::string> unique(words.begin(), words.end());
  for (const char* w : {"lstm", "gru", "rnn_tanh", "first", "last"}) {
    EXPECT_EQ(unique.count(w), 1u) << w;
  }
  EXPECT_EQ(words[0], "always");
}

TEST(Vocab, ParamsListTheSchemaInOrder) {
  const auto& params = OpRegistry::Get()->Lookup("RNN").params();
  ASSERT_GE(params.size(), 3u);
  EXPECT_EQ(params[0].name, "state_size");
  EXPECT_EQ(params[3].name, "mode");
  EXPECT_EQ(params[3].choices,
            (std::vector<std::string>{"rnn_relu", "rnn_tanh", "lstm", "gru"}));
}

}  // namespace
}  // namespace fuzz
}  // namespace mx
