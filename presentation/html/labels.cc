#include "presentation/html/labels.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace ssgd::html {
namespace {

// The most differing keys the greedy choice looks at (a hostile report may
// hold very many).
constexpr std::size_t kMaxCandidates = 1000;

std::string file_name(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.empty() ? path : name;
}

// `text` cut to at most `limit` bytes at a UTF-8 boundary, "..." added.
std::string shorten(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

const Setting* find(const SettingIndex& s, const std::string& key) {
  const auto it = s.find(key);
  return it == s.end() ? nullptr : it->second;
}

bool same(const Setting* a, const Setting* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->value == b->value;
}

}  // namespace

std::string setting_text(const Json& v) {
  const std::string text = v.is_string() ? v.get<std::string>()
                           : v.is_null() ? std::string("none")
                                         : v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return shorten(text, kMaxValueText);
}

void flatten_settings(const Json& object, const std::string& prefix, Settings& out) {
  if (!object.is_object()) return;
  for (const auto& [k, v] : object.items()) {
    std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object() && !v.empty()) {
      flatten_settings(v, key, out);
      continue;
    }
    // "network.inter_node.preset" is what --set calls "network.inter_node".
    constexpr std::string_view kPreset = ".preset";
    if (key.size() > kPreset.size() && key.ends_with(kPreset)) {
      const std::string parent = key.substr(0, key.size() - kPreset.size());
      if (parent.find('.') != std::string::npos) key = parent;
    }
    out.push_back({key, v, setting_text(v)});
  }
}

Setting path_setting(const std::string& key, const std::string& path) {
  // By its file name: one file given by two paths is one value.
  const std::string name = file_name(path);
  return {key, Json(name), shorten(name, kMaxValueText)};
}

std::vector<std::string> file_labels(const std::vector<std::string>& files) {
  std::vector<std::string> names;
  std::map<std::string, int> seen;
  for (const std::string& f : files) ++seen[file_name(f)];
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string name = file_name(files[i]);
    names.push_back(seen[name] > 1 ? fmt::format("{}: {}", i + 1, name) : name);
  }
  return names;
}

SettingIndex index_of(const Settings& s) {
  SettingIndex index;
  for (const Setting& x : s) index.emplace(x.key, &x);  // the first of a key
  return index;
}

std::string setting_of(const SettingIndex& s, const std::string& key, bool full) {
  const Setting* x = find(s, key);
  if (x == nullptr) return "-";
  if (!full) return x->text;
  return x->value.is_string() ? x->value.get<std::string>()
                              : x->value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Labelling label_by_differences(const std::vector<Settings>& inputs,
                               const std::vector<std::string>& files,
                               const std::vector<std::string>& priority) {
  Labelling out;
  const std::size_t n = inputs.size();
  // Every key, first seen first; those whose values are not all the same.
  std::vector<std::string> keys;
  {
    std::map<std::string, bool> known;
    for (const Settings& s : inputs) {
      for (const Setting& x : s) {
        if (known.emplace(x.key, true).second) keys.push_back(x.key);
      }
    }
  }
  std::vector<SettingIndex> index;
  for (const Settings& s : inputs) index.push_back(index_of(s));
  std::vector<std::vector<const Setting*>> at;  // at[k][i]
  for (const std::string& key : keys) {
    std::vector<const Setting*> values;
    for (const SettingIndex& s : index) values.push_back(find(s, key));
    bool differs = false;
    for (std::size_t i = 1; i < n && !differs; ++i) differs = !same(values[0], values[i]);
    if (differs) {
      out.differing.push_back(key);
      at.push_back(std::move(values));
    }
  }
  if (n < 2 || out.differing.empty()) {
    out.labels = file_labels(files);
    return out;
  }
  std::vector<std::size_t> chosen;
  if (out.differing.size() <= kMaxLabelKeys) {
    for (std::size_t k = 0; k < out.differing.size(); ++k) chosen.push_back(k);
  } else {
    std::vector<std::pair<std::size_t, std::size_t>> apart;  // pairs not told apart yet
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) apart.emplace_back(i, j);
    }
    const auto rank = [&](const std::string& key) {
      return static_cast<std::size_t>(std::find(priority.begin(), priority.end(), key) -
                                      priority.begin());
    };
    const std::size_t candidates = std::min(out.differing.size(), kMaxCandidates);
    while (!apart.empty()) {
      std::size_t best = candidates, best_count = 0;
      for (std::size_t k = 0; k < candidates; ++k) {
        if (std::find(chosen.begin(), chosen.end(), k) != chosen.end()) continue;
        std::size_t count = 0;
        for (const auto& [i, j] : apart) count += same(at[k][i], at[k][j]) ? 0 : 1;
        if (count > best_count || (count == best_count && count > 0 &&
                                   rank(out.differing[k]) < rank(out.differing[best]))) {
          best = k;
          best_count = count;
        }
      }
      if (best_count == 0) break;
      chosen.push_back(best);
      std::erase_if(apart,
                    [&](const auto& p) { return !same(at[best][p.first], at[best][p.second]); });
    }
  }
  // Named in the order of `priority`, then the inputs' order.
  const auto rank = [&](std::size_t k) {
    return static_cast<std::size_t>(std::find(priority.begin(), priority.end(), out.differing[k]) -
                                    priority.begin());
  };
  std::stable_sort(chosen.begin(), chosen.end(), [&](std::size_t a, std::size_t b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  for (std::size_t k : chosen) out.shown.push_back(out.differing[k]);
  for (std::size_t i = 0; i < n; ++i) {
    std::string label;
    for (std::size_t k : chosen) {
      label += fmt::format("{}{}={}", label.empty() ? "" : ", ", out.differing[k],
                           at[k][i] == nullptr ? "-" : at[k][i]->text);
    }
    out.labels.push_back(std::move(label));
  }
  // Values cut short (or the same file names) can still be equal: the file
  // names, then the input's place, tell them apart.
  const std::vector<std::string> names = file_labels(files);
  for (int pass = 0; pass < 2; ++pass) {
    std::map<std::string, int> seen;
    for (const std::string& l : out.labels) ++seen[l];
    for (std::size_t i = 0; i < n; ++i) {
      if (seen[out.labels[i]] < 2) continue;
      out.labels[i] = pass == 0 ? fmt::format("{} ({})", out.labels[i], names[i])
                                : fmt::format("{}: {}", i + 1, out.labels[i]);
    }
  }
  return out;
}

}  // namespace ssgd::html
