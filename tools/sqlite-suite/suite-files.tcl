# tools/sqlite-suite/suite-files.tcl — prints the test scripts of one of
# the suites that SQLite's test/permutations.test defines ("veryquick",
# ...), one per line, as paths relative to the source tree, then the
# suite's per-script settings that running a script on its own leaves out.
# Also "faults" (below). Run by tools/sqlite-suite/run with a testfixture, in a scratch directory
# (sourcing permutations.test opens a test database in the current one):
#
#   testfixture suite-files.tcl SOURCE-DIR SUITE
#
# Output lines: "FILE <path>" per script, "OPT <option> <length>" per
# setting (-initialize, -presql, -dbconfig; a non-zero length means the
# suite changes something that a script run on its own does not get).

set src [file normalize [lindex $argv 0]]
set suite [lindex $argv 1]

# permutations.test takes its test directory from argv0, and so does the
# tester.tcl it sources; an empty argv keeps tester.tcl's option parsing
# quiet, and a name other than permutations.test keeps its main from running.
set argv0 [file join $src test suite-files]
set argv {}
source [file join $src test permutations.test]

# "faults" is not one of permutations.test's suites: it is what "quick"
# runs and "veryquick" leaves out for injecting out-of-memory and I/O
# errors (names with malloc, ioerr, fault or _err).
if {$suite eq "faults"} {
  set files {}
  foreach f $::allquicktests {
    foreach pattern {*malloc* *ioerr* *fault* *_err*} {
      if {[string match $pattern [file tail $f]]} {
        lappend files $f
        break
      }
    }
  }
  array set spec [list -files $files -initialize "" -presql "" -dbconfig ""]
} elseif {[info exists ::testspec($suite)]} {
  array set spec $::testspec($suite)
} else {
  puts "NOSUITE $suite"
  exit 1
}
set prefix "$src/"
foreach f [lsort $spec(-files)] {
  set p [file normalize [file join $src test $f]]
  if {[string first $prefix $p] == 0} {
    set p [string range $p [string length $prefix] end]
  }
  puts "FILE $p"
}
foreach k {-initialize -presql -dbconfig} {
  puts "OPT $k [string length [string trim $spec($k)]]"
}
exit 0
