package io.ringcast.it.cluster.faults;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The fault suite's entry point, run by {@code scripts/cluster-faults.sh} inside a private network
 * namespace: {@code FaultSuite [--quick] [fault...]} (all six when none is named). Writes a JSON and
 * a text report per fault to {@code target/cluster-faults/}; exits 0 when every fault passed, 1 when
 * one failed, 2 when the suite could not run.
 */
public final class FaultSuite {
    private FaultSuite() {
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        List<Fault> faults = new ArrayList<>();
        for (String a : args) {
            if (a.equals("--quick")) {
                quick = true;
            } else {
                faults.add(Fault.byId(a));
            }
        }
        if (faults.isEmpty()) {
            faults.addAll(Arrays.asList(Fault.values()));
        }
        Path dir = Path.of("target", "cluster-faults");
        List<String> summary = new ArrayList<>();
        boolean allPassed = true;
        for (Fault f : faults) {
            FaultReport r;
            try {
                r = FaultRun.run(f, quick ? Fault.Durations.QUICK : Fault.Durations.FULL);
            } catch (IllegalStateException e) {
                System.out.println("the fault suite cannot run: " + e.getMessage());
                System.exit(2);
                return;
            }
            r.write(dir);
            System.out.println(r.text());
            summary.add(String.format("%-16s %s  %s%s", f.id, r.passed() ? "PASSED" : "FAILED", r.verdict().counts(),
                    r.failures().isEmpty() ? "" : " " + r.failures().stream().map(x -> x.split(":")[0]).toList()));
            allPassed &= r.passed();
        }
        System.out.println("fault suite (" + (quick ? "quick" : "full") + "), reports in " + dir.toAbsolutePath() + ":");
        summary.forEach(s -> System.out.println("  " + s));
        System.exit(allPassed ? 0 : 1);
    }
}
