# Turns INPUT into OUTPUT, a C++ file defining
#   std::string_view wattwise::report::html::embedded::SYMBOL()
# whose bytes are INPUT's, so the report carries its JavaScript and CSS and needs no network.
# A byte array, not a raw string literal: minified JavaScript may contain any delimiter.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
# One line per 32 bytes keeps the generated file readable to diff tools and compilers.
string(REGEX REPLACE "((('[^']*',){32}))" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by embed_file.cmake; do not edit.\n"
  "#include <string_view>\n\n"
  "namespace wattwise::report::html::embedded {\n"
  "namespace {\nconst char kBytes[${size} + 1] = {\n${bytes}'\\0'};\n}  // namespace\n"
  "std::string_view ${SYMBOL}() { return {kBytes, ${size}}; }\n"
  "}  // namespace wattwise::report::html::embedded\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
