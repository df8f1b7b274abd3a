/* Compiled code of every kind a short run gives: sum's loop is hot long before sum is
 * called often (an OSR compilation, then a normal one), square is inlined into it, and
 * System.arraycopy gets its native wrapper. Prints a result the test checks. */
public class HotLoops {
    static int square(int x) {
        return x * x;
    }

    static long sum(int n) {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += square(i);
        return s;
    }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        int[] from = new int[64], to = new int[64];
        long total = 0;

        for (int r = 0; r < rounds; r++) {
            total += sum(1000);
            System.arraycopy(from, 0, to, 0, from.length);
        }
        System.out.println(total);
    }
}
