/* A hot method with a small callee compiled inline, for bytecode ranges per method.
 *
 * hot(n) calls inner n times; inner's loop runs K times per call, each time one i2s right
 * after a getstatic (so the interpreter dispatches it to the start of its codelet), and
 * no other code of the program has an i2s. The first argument is the number of calls of
 * hot(CALLS); the program prints its result, which the construction fixes. */
public class Inline {
    static final int K = 40;
    static final int CALLS = 100;
    static int step = 70003;

    static int inner(int x) {
        int s = x;
        for (int i = 0; i < K; i++)
            s += (short) step;
        return s;
    }

    static long hot(int n) {
        long t = 0;
        for (int j = 0; j < n; j++)
            t += inner(j);
        return t;
    }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        long total = 0;
        for (int r = 0; r < rounds; r++)
            total += hot(CALLS);
        System.out.println(total);
    }
}
