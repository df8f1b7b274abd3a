/* Runs the bytecode i2s exactly K times (K = the first argument): the cast below is the
 * only i2s the program has, and it is reached right after a getstatic, so each execution
 * is one dispatch into the start of the interpreter's i2s codelet. */
public class CodeletEntries {
    static int value = 70000;
    static int sink;

    public static void main(String[] args) {
        int k = Integer.parseInt(args[0]);
        for (int i = 0; i < k; i++)
            sink += (short) value;
        System.out.println(sink);
    }
}
