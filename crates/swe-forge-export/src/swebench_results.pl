# swe-forge's per-test results of one `/swe-forge/run-tests` run, printed in the generic format
# SWE-bench's `parse_log_jest_json` reads: `[PASSED] <id>` or `[FAILED] <id>`, one line per test
# (skipped tests print nothing). Runs inside the instance image, on the run's own log and result
# files: perl LOG RESULTS_DIR PARSER RESULTS_PARSER [NAMES]. The ids are swe-forge's canonical ids
# (crates/swe-forge-logparse) for the formats below; NAMES, when given, is a file of
# `<canonical id>\t<name>` lines that renames them (the `--naming msb` export): several ids of
# one name rolled up (any failure fails it), ids without a name left out. A sketch of swe-forge's
# parsers for their common shapes, not all of their cases: a format it does not know prints
# nothing, so the tests count as missing (failed).
use strict;
use warnings;

my ($log, $dir, $parser, $results_parser, $names) = @ARGV;
my %status;    # id -> 3 FAIL, 2 PASS, 1 SKIP
sub put { my ($id, $s) = @_; $status{$id} = $s if !defined $status{$id} || $s > $status{$id}; }
sub lines {
    my ($path) = @_;
    open(my $fh, '<', $path) or return ();
    my @l = <$fh>;
    close $fh;
    s/\r?\n\z// for @l;
    return @l;
}
sub files {
    my ($re) = @_;
    my @out;
    my @todo = ($dir);
    while (defined(my $d = shift @todo)) {
        opendir(my $dh, $d) or next;
        for my $e (sort readdir $dh) {
            next if $e eq '.' || $e eq '..';
            my $p = "$d/$e";
            if (-d $p) { push @todo, $p } elsif ($e =~ $re) { push @out, $p }
        }
        closedir $dh;
    }
    return @out;
}
sub chr8 { my $c = chr($_[0]); utf8::encode($c); return $c; }
sub unjson {
    my ($s) = @_;
    $s =~ s/\\u([0-9a-fA-F]{4})/chr8(hex $1)/ge;
    $s =~ s/\\(["\\\/])/$1/g;
    $s =~ s/\\n/\n/g;
    $s =~ s/\\t/\t/g;
    return $s;
}
sub unxml {
    my ($s) = @_;
    $s =~ s/&lt;/</g;
    $s =~ s/&gt;/>/g;
    $s =~ s/&quot;/"/g;
    $s =~ s/&apos;/'/g;
    $s =~ s/&#(\d+);/chr8($1)/ge;
    $s =~ s/&#x([0-9a-fA-F]+);/chr8(hex $1)/ge;
    $s =~ s/&amp;/&/g;
    return $s;
}

# The result files when the run left some (as swe-forge reads them), else the log.
my $format = $results_parser ne '' && files(qr/./) ? $results_parser : $parser;
if ($format eq 'go-test-json') {
    for (lines($log)) {
        next unless /^\{/ && /"Action":"(pass|fail|skip)"/;
        my $action = $1;
        next unless /"Test":"((?:[^"\\]|\\.)*)"/;
        my $test = unjson($1);
        next unless /"Package":"((?:[^"\\]|\\.)*)"/;
        put(unjson($1) . "::$test", { pass => 2, fail => 3, skip => 1 }->{$action});
    }
} elsif ($format eq 'go-test') {
    my @pending;    # results since the last package summary: they belong to the next one
    my $flush = sub { my ($pkg) = @_; put("$pkg\::$_->[0]", $_->[1]) for @pending; @pending = (); };
    for (lines($log)) {
        if (/^\s*--- (PASS|FAIL|SKIP): (.+?) \([\d.]+s\)\s*$/) {
            push @pending, [$2, { PASS => 2, FAIL => 3, SKIP => 1 }->{$1}];
        } elsif (/^(?:ok|FAIL)\s+(\S+)\s+(?:[\d.]+s|\(cached\))/) {
            $flush->($1);
        }
    }
    $flush->('?');
} elsif ($format eq 'cargo-test') {
    my ($prefix, $doc) = ('?', 0);
    for (lines($log)) {
        if (/^\s*Running (?:unittests )?(\S+) \((?:.*\/)?deps\/(.+)-[0-9a-f]+\)\s*$/) {
            my ($src, $bin) = ($1, $2);
            my $kind = $src =~ m{^(?:src/main\.rs|src/bin/)} ? '[bin]'
                : $src =~ m{^examples/} ? '[example]' : $src =~ m{^benches/} ? '[bench]' : '';
            ($prefix, $doc) = ("$bin$kind", 0);
        } elsif (/^\s*Doc-tests (\S+)\s*$/) {
            ($prefix, $doc) = ($1, 1);
        } elsif (/^test (.+?) \.\.\. (ok|FAILED|ignored)\b/) {
            my ($name, $s) = ($1, { ok => 2, FAILED => 3, ignored => 1 }->{$2});
            $name =~ s/ - should panic\z// unless $doc;
            put($doc ? "$prefix\::doc::$name" : "$prefix\::$name", $s);
        }
    }
    # Doctests without their line, as swe-forge names them (crates/swe-forge-logparse/src/stable.rs):
    # `src/lib.rs - add (line 35)` -> `src/lib.rs - add`, ` (doctest K)` for an item's K-th in line order.
    my %items;
    for my $id (keys %status) {
        next unless $id =~ /\A(.*::doc::.*) \(line (\d+)\)((?: - .*)?)\z/s;
        my ($before, $line, $after) = ($1, $2, $3);
        next unless $before =~ /::doc::.*(?: - | -\z)/s;
        push @{ $items{$before} }, [$line, $id, $after];
    }
    for my $before (keys %items) {
        my ($k, $last) = (0, -1);
        for my $d (sort { $a->[0] <=> $b->[0] || $a->[1] cmp $b->[1] } @{ $items{$before} }) {
            my ($line, $id, $after) = @$d;
            ($k, $last) = ($k + 1, $line) if $line != $last;
            my $s = delete $status{$id};
            put($k == 1 ? "$before$after" : "$before (doctest $k)$after", $s);
        }
    }
} elsif ($format eq 'gtest') {
    for (lines($log)) {
        s/^\d+: //;
        if (/^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+?)(?:, where .*)? \(\d+ ms\)\s*$/) {
            put($2, { OK => 2, FAILED => 3, SKIPPED => 1 }->{$1});
        }
    }
} elsif ($format eq 'automake') {
    for (lines($log)) {
        if (/^(PASS|XFAIL|FAIL|XPASS|ERROR|SKIP): (\S+)\s*$/) {
            put($2, { PASS => 2, XFAIL => 2, FAIL => 3, XPASS => 3, ERROR => 3, SKIP => 1 }->{$1});
        }
    }
} elsif ($format eq 'vitest') {
    for (lines($log)) {
        if (/^\s*(✓|√|×|✕|↓|□) (.+? > .+?)(?: \d+(?:\.\d+)?\s*m?s)?\s*$/) {
            my $m = $1;
            put($2, ($m eq '✓' || $m eq '√') ? 2 : ($m eq '↓' || $m eq '□') ? 1 : 3);
        }
    }
} elsif ($format eq 'junit-xml' || $format eq 'ctest-junit') {
    for my $f (files(qr/\.xml\z/)) {
        local $/;
        open(my $fh, '<', $f) or next;
        my $xml = <$fh>;
        close $fh;
        while ($xml =~ /<testcase\b([^>]*?)(\/>|>(.*?)<\/testcase>)/gs) {
            my ($attrs, $body) = ($1, defined $3 ? $3 : '');
            my ($name) = $attrs =~ /\bname="([^"]*)"/;
            my ($class) = $attrs =~ /\bclassname="([^"]*)"/;
            my ($run) = $attrs =~ /\bstatus="([^"]*)"/;
            $name = unxml(defined $name ? $name : '');
            my $id;
            if ($format eq 'ctest-junit') {
                $id = $name;
            } else {
                next unless defined $class && $class ne '';
                $name =~ s/\(.*?\)//;
                $id = $name eq '' ? unxml($class) : unxml($class) . "#$name";
            }
            next if $id eq '';
            my $skipped = $body =~ /<skipped\b/ || (defined $run && $run =~ /^(?:notrun|disabled|suppressed|skipped)\z/);
            put($id, $body =~ /<(failure|error)\b/ ? 3 : $skipped ? 1 : 2);
        }
    }
} elsif ($format eq 'jest-json' || $format eq 'vitest-json') {
    require JSON::PP;
    for my $f (files(qr/\.json\z/)) {
        local $/;
        open(my $fh, '<', $f) or next;
        my $report = eval { JSON::PP->new->utf8(0)->decode(<$fh>) };
        close $fh;
        next unless ref $report eq 'HASH';
        for my $file (@{ $report->{testResults} || [] }) {
            (my $path = $file->{name} // '') =~ s{^/testbed/}{};
            put($path, ($file->{status} // '') eq 'passed' ? 2 : 3);
            for my $t (@{ $file->{assertionResults} || [] }) {
                my $id = join(' > ', $path, @{ $t->{ancestorTitles} || [] }, $t->{title});
                my $s = $t->{status} // '';
                put($id, $s eq 'passed' ? 2 : $s eq 'failed' ? 3 : 1);
            }
        }
    }
}

if (defined $names && $names ne '') {
    my %rename;
    for (lines($names)) { my ($id, $name) = split /\t/, $_, 2; $rename{$id} = $name if defined $name; }
    my %named;
    for my $id (keys %status) {
        next unless exists $rename{$id};
        my $name = $rename{$id};
        $named{$name} = $status{$id} if !defined $named{$name} || $status{$id} > $named{$name};
    }
    %status = %named;
}
for my $id (sort keys %status) {
    print "[PASSED] $id\n" if $status{$id} == 2;
    print "[FAILED] $id\n" if $status{$id} == 3;
}
