# Why: warnings are on for every target of ours and must stay clean; -Werror is opt-in so a newer
# compiler on a user's machine cannot break their build.
option(RUNRUN_WERROR "Treat warnings as errors" OFF)
function(runrun_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
      -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual -Wnull-dereference
      -Wformat=2 -Wimplicit-fallthrough>)
  if(RUNRUN_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
