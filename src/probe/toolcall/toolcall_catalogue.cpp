/// toolcall_catalogue(): the tool schemas the toolcall probe offers, confusable on purpose.

#include "kvsweep/probe/toolcall/toolcall.hpp"


namespace kvsweep::probe {

namespace {

using nlohmann::json;

// Written for kvsweep. Parameter names overlap across neighbours on purpose (path / file_path /
// dir_path / root, pattern / query / regex / glob, service / service_name), so a model that reads
// a schema fuzzily picks a wrong tool or a neighbour's parameter.
constexpr const char* kCatalogue = R"([
 {"name": "search_files",
  "description": "Search every file below a directory for a literal text pattern; returns the paths of the files that contain it.",
  "parameters": {"type": "object", "properties": {
    "path": {"type": "string", "description": "Directory to search below."},
    "pattern": {"type": "string", "description": "Literal text to look for."},
    "max_results": {"type": "integer", "description": "Stop after this many files."},
    "case_sensitive": {"type": "boolean", "description": "Match letter case exactly."}},
   "required": ["path", "pattern"]}},
 {"name": "search_file",
  "description": "Search inside one file for a literal string; returns the matching lines.",
  "parameters": {"type": "object", "properties": {
    "file_path": {"type": "string", "description": "The file to search in."},
    "query": {"type": "string", "description": "Literal text to look for."},
    "context_lines": {"type": "integer", "description": "Lines of context around each match."}},
   "required": ["file_path", "query"]}},
 {"name": "grep_repo",
  "description": "Run a regular expression over the whole repository checked out at a root directory.",
  "parameters": {"type": "object", "properties": {
    "root": {"type": "string", "description": "Root directory of the checkout."},
    "regex": {"type": "string", "description": "Regular expression (RE2 syntax)."},
    "include_glob": {"type": "string", "description": "Only files matching this glob."}},
   "required": ["root", "regex"]}},
 {"name": "read_file",
  "description": "Read a range of lines from one file.",
  "parameters": {"type": "object", "properties": {
    "file_path": {"type": "string", "description": "The file to read."},
    "start_line": {"type": "integer", "description": "First line to read (1-based)."},
    "end_line": {"type": "integer", "description": "Last line to read (inclusive)."}},
   "required": ["file_path", "start_line", "end_line"]}},
 {"name": "open_file",
  "description": "Open a file in the editor, optionally at a line.",
  "parameters": {"type": "object", "properties": {
    "path": {"type": "string", "description": "The file to open."},
    "line": {"type": "integer", "description": "Line to place the cursor on."},
    "mode": {"type": "string", "enum": ["view", "edit"], "description": "Open read-only or for editing."}},
   "required": ["path"]}},
 {"name": "list_directory",
  "description": "List the entries of a directory.",
  "parameters": {"type": "object", "properties": {
    "dir_path": {"type": "string", "description": "The directory to list."},
    "recursive": {"type": "boolean", "description": "Also list every subdirectory."},
    "max_depth": {"type": "integer", "description": "Deepest level to descend to when recursive."}},
   "required": ["dir_path", "recursive"]}},
 {"name": "list_files",
  "description": "List the files whose paths match a glob pattern.",
  "parameters": {"type": "object", "properties": {
    "glob": {"type": "string", "description": "Glob pattern, e.g. src/**/*.py."},
    "root": {"type": "string", "description": "Directory the glob is relative to."}},
   "required": ["glob"]}},
 {"name": "get_log_entries",
  "description": "Fetch the log entries of one service at one severity level since a point in time.",
  "parameters": {"type": "object", "properties": {
    "service": {"type": "string", "description": "Service name."},
    "level": {"type": "string", "enum": ["debug", "info", "warn", "error"], "description": "Severity level."},
    "since": {"type": "string", "description": "ISO-8601 timestamp of the earliest entry."}},
   "required": ["service", "level", "since"]}},
 {"name": "tail_logs",
  "description": "Show the newest log lines of a service.",
  "parameters": {"type": "object", "properties": {
    "service_name": {"type": "string", "description": "Service name."},
    "lines": {"type": "integer", "description": "How many lines."}},
   "required": ["service_name"]}},
 {"name": "replace_in_file",
  "description": "Replace every occurrence of a text in one file.",
  "parameters": {"type": "object", "properties": {
    "file_path": {"type": "string", "description": "The file to edit."},
    "old_text": {"type": "string", "description": "Text to replace."},
    "new_text": {"type": "string", "description": "Replacement text."}},
   "required": ["file_path", "old_text", "new_text"]}},
 {"name": "run_command",
  "description": "Run a shell command and return its output.",
  "parameters": {"type": "object", "properties": {
    "command": {"type": "string", "description": "The command line."},
    "cwd": {"type": "string", "description": "Working directory."},
    "timeout_s": {"type": "integer", "description": "Seconds before the command is killed."}},
   "required": ["command"]}},
 {"name": "create_ticket",
  "description": "File a ticket in the issue tracker.",
  "parameters": {"type": "object", "properties": {
    "title": {"type": "string", "description": "One-line summary."},
    "priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"], "description": "Priority."},
    "assignee": {"type": "string", "description": "Who should handle it."}},
   "required": ["title", "priority"]}}
])";


}  // namespace

const json& toolcall_catalogue() {
  static const json catalogue = json::parse(kCatalogue);
  return catalogue;
}

}  // namespace kvsweep::probe
