/* Two Java threads, one after the other, running the same loop: "jf-hot" through hot(),
 * which C1 compiles early (the loop's back-edges alone pass its thresholds within the
 * first calls), "jf-cold" through cold(), which the test's CompileCommand excludes from
 * compilation (with coldRun, so nothing of that thread's own work is compiled or
 * inlined). Each thread notes its OS thread id as the kernel names it
 * (/proc/thread-self), and the program prints both sums (calls * n * 7 / 2, and the same
 * for calls / 10 on jf-cold, for n a multiple of 8) and each thread's name with its tid,
 * which the test compares with the report's thread names. With a third argument, the
 * main thread then allocates that many 4 KB arrays, none of which stays reachable, so
 * that a small young generation is collected again and again on the VM Thread while no
 * Java thread but main runs. */
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;

public class Threads {
    static volatile byte[] sink;
    static long hot(int n) {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += i & 7;
        return s;
    }

    static long hotRun(int calls, int n) {
        long s = 0;
        for (int c = 0; c < calls; c++)
            s += hot(n);
        return s;
    }

    static long cold(int n) {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += i & 7;
        return s;
    }

    static long coldRun(int calls, int n) {
        long s = 0;
        for (int c = 0; c < calls; c++)
            s += cold(n);
        return s;
    }

    static String osTid() {
        try {
            String self = Files.readSymbolicLink(Paths.get("/proc/thread-self")).toString();
            return self.substring(self.lastIndexOf('/') + 1);
        } catch (IOException e) {
            return "?";
        }
    }

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(args[0]), n = Integer.parseInt(args[1]);
        long[] sums = new long[2];
        String[] tids = new String[2];
        Thread hot = new Thread(() -> {
            tids[0] = osTid();
            sums[0] = hotRun(calls, n);
        }, "jf-hot");
        Thread cold = new Thread(() -> {
            tids[1] = osTid();
            sums[1] = coldRun(calls / 10, n);
        }, "jf-cold");

        hot.start();
        hot.join();
        cold.start();
        cold.join();
        int garbage = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        for (int i = 0; i < garbage; i++)
            sink = new byte[4096];
        System.out.println(sums[0] + " " + sums[1] + " jf-hot " + tids[0] + " jf-cold " + tids[1]);
    }
}
