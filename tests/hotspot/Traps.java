/* Uncommon traps C2 compiles in and the program then takes, one of each on purpose, with
 * C2 alone and -Xbatch (each method compiled before its next call):
 *  - unstable_if: branchy's x < 0 never held while profiled, then branchy(-1);
 *  - class_check: area's call site saw only Square, then a Circle;
 *  - null_check: unbox's object was never null, then null;
 *  - unstable_if in an inlined frame: depth's nmethod inlines branchyInner, whose x < 0
 *    never held, then depth(-1): the trap's frames are branchyInner@1 <- depth@1;
 *  - a deoptimization by class loading: spin's compiled loop inlined Base.weight while
 *    Base had no subclass; maybeLoad (neither compiled nor inlined: the test's
 *    CompileCommand) loads Heavier while spin's frame is on the stack, so the JVM
 *    deoptimizes that frame, which returns into DeoptimizationBlob;
 *  - an nmethod made not entrant and called again: weighAgain inlines Base.weight too, so
 *    loading Heavier makes it not entrant; callWeighAgain calls it without inlining it
 *    (the test's CompileCommand), so its nmethod stays valid and its call, bound to
 *    weighAgain's nmethod since warm, runs the jump HotSpot wrote over weighAgain's entry
 *    once, when main calls callWeighAgain after spin.
 * warm and spin are each compiled for OSR in their second call and entered there once
 * (the next call runs the standard nmethod compiled at that call).
 * Prints n(n+1)/2 + 11n + n(n+1)/2, three times, + 7 + 3 - 1 + 6 + n + (n + 2) + 1: the
 * test checks it. */
public class Traps {
    static abstract class Shape { abstract int area(); }

    static final class Square extends Shape {
        final int side;
        Square(int side) { this.side = side; }
        int area() { return side * side; }
    }

    static final class Circle extends Shape {
        final int r;
        Circle(int r) { this.r = r; }
        int area() { return 3 * r * r; }
    }

    static class Box {
        int value;
        Box(int v) { value = v; }
    }

    static class Base { int weight() { return 1; } }

    static class Heavier extends Base { int weight() { return 2; } }

    static int branchyInner(int x) {
        if (x < 0)
            return -x * 5;
        return x;
    }

    static int depth(int x) {
        return branchyInner(x) + 1;
    }

    static int weighAgain(Base b) {
        return b.weight();
    }

    static int callWeighAgain(Base b) {
        return weighAgain(b);
    }

    static int branchy(int x) {
        if (x < 0)
            return -x * 7;
        return x + 1;
    }

    static int area(Shape s) {
        return s.area();
    }

    static int unbox(Box b) {
        try {
            return b.value;
        } catch (NullPointerException e) {
            return -1;
        }
    }

    static int weigh(Base b) {
        return b.weight();
    }

    static int maybeLoad(int i, int n, boolean load) throws Exception {
        if (load && i == n - 1)
            return ((Base) Class.forName("Traps$Heavier").getDeclaredConstructor().newInstance())
                .weight();
        return 0;
    }

    static long spin(Base b, int n, boolean load) throws Exception {
        long t = 0;
        for (int i = 0; i < n; i++)
            t += weigh(b) + maybeLoad(i, n, load);
        return t;
    }

    static long warm(int n, Shape s, Box box, Base base) {
        long t = 0;
        for (int i = 0; i < n; i++)
            t += branchy(i) + area(s) + unbox(box) + weigh(base) + depth(i)
                + callWeighAgain(base);
        return t;
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long t = 0;

        for (int round = 0; round < 3; round++)
            t += warm(n, new Square(2), new Box(5), new Base());
        t += branchy(-1);
        t += area(new Circle(1));
        t += unbox(null);
        t += depth(-1);
        t += spin(new Base(), n, false) + spin(new Base(), n, true);
        t += callWeighAgain(new Base());
        System.out.println(t);
    }
}
