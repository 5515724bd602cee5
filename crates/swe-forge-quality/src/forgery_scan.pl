# swe-forge's forgery scan (swe_forge_quality::forgery, the same rules and walk): the lines a patch
# adds that forge test results or steer the test runner. perl SCRIPT PATCH [EXEMPT_RULE...]
# prints `swe-forge: tampered: PATH:LINE: RULE: TEXT` for each finding and exits 1 when there is
# one, 0 when there is none, 2 when PATCH cannot be read.
use strict;
use warnings;

my $framing = qr{__FRAMING__};
my $runner_flag = qr{__RUNNER_FLAG__};
my $argv_change = qr{__ARGV_CHANGE__};
my $flag_literal = qr{__FLAG_LITERAL__};
my $proc_fd = qr{__PROC_FD__};

my ($patch, @exempt) = @ARGV;
my %exempt = map { $_ => 1 } @exempt;
open(my $fh, '<', $patch) or do { print "swe-forge: forgery scan: cannot read $patch: $!\n"; exit 2 };
my $found = 0;
sub add {
    my ($path, $line, $rule, $text) = @_;
    return if $exempt{$rule};
    $text =~ s/^\s+|\s+\z//g;
    $text = substr($text, 0, 120);
    $text =~ s/([\x00-\x1f\x7f])/sprintf('\\x%02x', ord($1))/ge;
    print "swe-forge: tampered: $path:$line: $rule: $text\n";
    $found = 1;
}
my ($path, $go, $in_init, $argv_at, $argv_text, $flag) = (undef, 0, 0, undef, undef, 0);
my ($new_line, $old_left, $new_left) = (0, 0, 0);
sub finish {
    add($path, $argv_at, 'argv-runner-flag', $argv_text) if defined $path && defined $argv_at && $flag;
}
while (my $line = <$fh>) {
    $line =~ s/\n\z//;
    $line =~ s/\r\z//;
    if ($old_left == 0 && $new_left == 0) {
        if ($line =~ /^diff --git (.*)\z/s) {
            finish();
            my $rest = $1;
            $path = $rest =~ /.* b\/(.*)\z/s ? $1 : $rest;
            ($go, $in_init, $argv_at, $argv_text, $flag) = ($path =~ /\.go\z/ ? 1 : 0, 0, undef, undef, 0);
        } elsif ($line =~ /^\+\+\+ b\/([^\t]*)/) {
            $path = $1;
            $go = $path =~ /\.go\z/ ? 1 : 0;
        } elsif ($line =~ /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? /) {
            ($old_left, $new_left, $new_line) = ($2 // 1, $4 // 1, $3);
        }
        next;
    }
    next unless defined $path;
    my $kind = $line eq '' ? ' ' : substr($line, 0, 1);
    my $text = $line eq '' ? '' : substr($line, 1);
    if ($kind eq '-') { $old_left-- if $old_left > 0; next; }
    next if $kind eq '\\';
    if ($go && $text =~ /^func init\(\)/) { $in_init = 1; } elsif ($text =~ /^\}/) { $in_init = 0; }
    if ($kind eq '+') {
        add($path, $new_line, 'result-framing', $text) if $text =~ $framing;
        add($path, $new_line, 'runner-flag', $text) if $text =~ $runner_flag;
        add($path, $new_line, 'proc-fd', $text) if $text =~ $proc_fd;
        if ($text =~ $argv_change) {
            add($path, $new_line, 'argv-in-init', $text) if $in_init;
            ($argv_at, $argv_text) = ($new_line, $text) unless defined $argv_at;
        }
        $flag = 1 if $text =~ $flag_literal || $text =~ $runner_flag;
    } else {
        $old_left-- if $old_left > 0;
    }
    $new_line++;
    $new_left-- if $new_left > 0;
}
finish();
exit $found;
