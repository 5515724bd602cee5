# swe-forge's grading of one Harbor task (schemas/harbor.md): reads the `[PASSED] <id>` /
# `[FAILED] <id>` lines results.pl printed for the verifier's run and the task's two lists (one
# id a line), prints each listed test's verdict and writes Harbor's reward file: 1 when every
# FAIL_TO_PASS and PASS_TO_PASS test passed, else 0. A listed test the run did not report counts
# as failed. perl GRADE RESULTS FAIL_TO_PASS PASS_TO_PASS REWARD
use strict;
use warnings;

my ($results, $f2p, $p2p, $reward) = @ARGV;
my %status;
open(my $r, '<', $results) or die "grade: cannot read $results: $!\n";
while (my $line = <$r>) {
    $line =~ s/\r?\n\z//;
    if ($line =~ /^\[(PASSED|FAILED)\] (.*)\z/s) {
        # A test reported both ways (several runs of one name) failed.
        $status{$2} = $1 if !defined $status{$2} || $1 eq 'FAILED';
    }
}
close $r;
my ($ok, $total, $bad) = (0, 0, 0);
for my $pair (["FAIL_TO_PASS", $f2p], ["PASS_TO_PASS", $p2p]) {
    my ($list, $path) = @$pair;
    open(my $fh, '<', $path) or die "grade: cannot read $path: $!\n";
    while (my $id = <$fh>) {
        $id =~ s/\n\z//;
        next if $id eq '';
        $total++;
        my $s = $status{$id} // 'MISSING';
        if ($s eq 'PASSED') {
            $ok++;
        } else {
            $bad++;
            print "swe-forge: $list $s: $id\n";
        }
    }
    close $fh;
}
my $score = ($total > 0 && $bad == 0) ? 1 : 0;
print "swe-forge: $ok of $total listed tests passed; reward $score\n";
open(my $w, '>', $reward) or die "grade: cannot write $reward: $!\n";
print $w "$score\n";
close $w;
