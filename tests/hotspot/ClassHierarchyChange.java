/* Compiled code HotSpot patches while it runs. step's calls from total are resolved the
 * first time they run (their displacements rewritten), and step is compiled with
 * Shape.area bound by class-hierarchy analysis (no subclass of Shape is loaded yet).
 * Loading Square, which overrides area, makes that nmethod not entrant (its entry
 * overwritten with a jump); the call sites that reach it are resolved again, and the
 * recompiled step's virtual call meets both classes (its inline cache goes from
 * monomorphic to megamorphic). Run with step not inlined
 * (-XX:CompileCommand=dontinline,ClassHierarchyChange::step). Prints 4000 * rounds:
 * first rounds * 1000 areas of 1, then rounds * 1000 of 1 and of 2. */
public class ClassHierarchyChange {
    static class Shape {
        int area() {
            return 1;
        }
    }

    static class Square extends Shape {
        @Override
        int area() {
            return 2;
        }
    }

    static int step(Shape s) {
        return s.area();
    }

    static long total(Shape s, int n) {
        long t = 0;
        for (int i = 0; i < n; i++)
            t += step(s);
        return t;
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        Shape base = new Shape();
        long sum = 0;

        for (int r = 0; r < rounds; r++)
            sum += total(base, 1000);
        /* loaded only now: until here Shape has no subclass */
        Shape square = (Shape) Class.forName("ClassHierarchyChange$Square")
                .getDeclaredConstructor().newInstance();
        for (int r = 0; r < rounds; r++)
            sum += total(base, 1000) + total(square, 1000);
        System.out.println(sum);
    }
}
