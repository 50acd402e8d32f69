#pragma once
// Names for what-ifs compared on one page: each input (a simulate run, a
// scale or optimize report) is described by its settings as dotted keys
// ("policy.overlap", "network.inter_node", "scenario"), and is labelled by
// the keys whose values differ between the inputs compared
// ("policy.overlap=bsp, network.inter_node=100gbe"): all of them when they
// are 3 or fewer, else the fewest that still tell every input apart (chosen
// greedily, the keys of `priority` first among equals), named in the order
// of `priority`, then of first appearance. Labels are short and unique; when
// no key differs, each input is named by its file.

#include <map>
#include <string>
#include <vector>

#include "presentation/html/json_fields.h"

namespace ssgd::html {

struct Setting {
  std::string key;   // dotted
  Json value;        // compared as JSON
  std::string text;  // as a label shows it (short)
};
using Settings = std::vector<Setting>;

// The most keys a label lists when it can list every key that differs, and
// the longest value text.
inline constexpr std::size_t kMaxLabelKeys = 3;
inline constexpr std::size_t kMaxValueText = 28;

// `object`'s leaves as dotted keys under `prefix`, in its order; arrays are
// leaves. A key "X.Y.preset" is named "X.Y" ("network.inter_node", as --set
// writes it).
void flatten_settings(const Json& object, const std::string& prefix, Settings& out);
// A path-valued setting, compared and named by its file name (the same file
// given as "scenarios/a.yaml" and "/abs/scenarios/a.yaml" is one value).
Setting path_setting(const std::string& key, const std::string& path);
// `v` as a label shows it: a string as itself, anything else as compact
// JSON; at most kMaxValueText bytes (then "...").
std::string setting_text(const Json& v);

struct Labelling {
  std::vector<std::string> labels;     // one per input, unique
  std::vector<std::string> differing;  // every key whose values differ, first seen first
  std::vector<std::string> shown;      // the keys the labels name
};

// `files`: each input's path as given (the fallback, by file name).
Labelling label_by_differences(const std::vector<Settings>& inputs,
                               const std::vector<std::string>& files,
                               const std::vector<std::string>& priority);

// The inputs' file names, "N: name" where two would be the same.
std::vector<std::string> file_labels(const std::vector<std::string>& files);

// Settings by key (the first of a key), to look many up.
using SettingIndex = std::map<std::string, const Setting*>;
SettingIndex index_of(const Settings& s);
// The text of `key` in `s`, or "-" when it has none (full length when
// `full`, else as a label shows it).
std::string setting_of(const SettingIndex& s, const std::string& key, bool full);

}  // namespace ssgd::html
