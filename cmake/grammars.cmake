# The tree-sitter grammars corpus/ parses Python, JavaScript and PHP with: their generated C
# sources come from the npm registry through scripts/grammars (never from this
# repository) and are compiled here into one static library, without our warnings:
# it is third-party generated code. The runtime is Debian's libtree-sitter.

if(NOT KVSWEEP_GRAMMARS_DIR)
  message(FATAL_ERROR "KVSWEEP_GRAMMARS_DIR is not set: run scripts/grammars (it fetches the tree-sitter "
                      "grammars and prints their directory) and pass -DKVSWEEP_GRAMMARS_DIR=<that directory>, "
                      "or build with scripts/setup, which does both")
endif()

set(KVSWEEP_GRAMMAR_SOURCES
    ${KVSWEEP_GRAMMARS_DIR}/tree-sitter-python/src/parser.c
    ${KVSWEEP_GRAMMARS_DIR}/tree-sitter-python/src/scanner.c
    ${KVSWEEP_GRAMMARS_DIR}/tree-sitter-javascript/src/parser.c
    ${KVSWEEP_GRAMMARS_DIR}/tree-sitter-javascript/src/scanner.c
    # The `php` grammar (not `php_only`): it reads `<?php` tags and inline HTML.
    ${KVSWEEP_GRAMMARS_DIR}/tree-sitter-php/php/src/parser.c
    ${KVSWEEP_GRAMMARS_DIR}/tree-sitter-php/php/src/scanner.c)
foreach(source IN LISTS KVSWEEP_GRAMMAR_SOURCES)
  if(NOT EXISTS ${source})
    message(FATAL_ERROR "KVSWEEP_GRAMMARS_DIR=${KVSWEEP_GRAMMARS_DIR} has no ${source}: "
                        "run scripts/grammars and pass the directory it prints")
  endif()
endforeach()

add_library(kvsweep_grammars STATIC ${KVSWEEP_GRAMMAR_SOURCES})
set_target_properties(kvsweep_grammars PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON)
target_compile_options(kvsweep_grammars PRIVATE -w)
# tree-sitter-php's shared common/scanner.h includes "tree_sitter/array.h" from the grammar's src/.
set_source_files_properties(${KVSWEEP_GRAMMARS_DIR}/tree-sitter-php/php/src/scanner.c
                            PROPERTIES INCLUDE_DIRECTORIES ${KVSWEEP_GRAMMARS_DIR}/tree-sitter-php/php/src)
target_link_libraries(kvsweep_grammars PUBLIC PkgConfig::TREE_SITTER)
