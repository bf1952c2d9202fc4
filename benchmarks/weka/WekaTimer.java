// Times WEKA classifiers in ONE warm JVM, for benchmarks/bench_weka.py (which compiles and runs it).
//
//   java -cp weka.jar:CLASSES WekaTimer JOBS.tsv REPEATS LONG_MS
//
// JOBS.tsv: one job a line, five tab-separated fields: id, classifier class, its options (one string, as
// on WEKA's command line), train.arff, test.arff (the class is the last attribute). For each job: build
// once and test (the warm-up, which gives the accuracy), then, if the warm-up took less than LONG_MS,
// REPEATS more timed builds+tests of fresh copies (a slow job is timed by its warm-up alone: the JIT
// matters little there, and repeats would cost minutes). Testing = distributionForInstance on every test
// row, the class of highest probability counted correct (Evaluation's pctCorrect: an all-zero
// distribution is unclassified, hence wrong).
//
// Output (stdout, one JSON object a line, flushed): {"ready":…} first, then per job {"begin":id} and
// {"id":…,"status":"ok","acc":…,"build_ms":[…],"test_ms":[…],"warm_build_ms":…,"warm_test_ms":…}
// or {"id":…,"status":"error","reason":…}. The caller kills the JVM when a job overruns its limit.
import java.io.BufferedReader;
import java.io.FileReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import weka.classifiers.AbstractClassifier;
import weka.classifiers.Classifier;
import weka.core.Instance;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;

public class WekaTimer {
    private static final Map<String, Instances> DATA = new HashMap<>();

    private static Instances load(String path) throws Exception {
        Instances data = DATA.get(path);
        if (data == null) {
            data = DataSource.read(path);
            data.setClassIndex(data.numAttributes() - 1);
            DATA.clear();  // jobs come grouped by split: keep the current pair only
            DATA.put(path, data);
        }
        return data;
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    private static String list(List<Double> xs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) b.append(i > 0 ? "," : "").append(String.format("%.3f", xs.get(i)));
        return b.append(']').toString();
    }

    /** Build a fresh copy on train, classify test: {build ms, test ms, correct}. */
    private static double[] once(String cls, String options, Instances train, Instances test) throws Exception {
        Classifier c = AbstractClassifier.forName(cls, Utils.splitOptions(options));
        Instances copy = new Instances(train);  // some learners change their training data
        long t0 = System.nanoTime();
        c.buildClassifier(copy);
        long t1 = System.nanoTime();
        int correct = 0;
        for (int i = 0; i < test.numInstances(); i++) {
            Instance row = test.instance(i);
            double[] dist = c.distributionForInstance(row);
            if (Utils.sum(dist) > 0 && Utils.maxIndex(dist) == (int) row.classValue()) correct++;
        }
        long t2 = System.nanoTime();
        return new double[] {(t1 - t0) / 1e6, (t2 - t1) / 1e6, correct};
    }

    public static void main(String[] args) throws Exception {
        int repeats = Integer.parseInt(args[1]);
        double longMs = Double.parseDouble(args[2]);
        System.out.println("{\"ready\":" + System.currentTimeMillis() + ",\"java\":" + quote(System.getProperty("java.version"))
                           + ",\"weka\":" + quote(weka.core.Version.VERSION) + "}");
        System.out.flush();
        List<String[]> jobs = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new FileReader(args[0]))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (!line.isBlank()) jobs.add(line.split("\t", -1));
            }
        }
        for (String[] job : jobs) {
            String id = job[0];
            System.out.println("{\"begin\":" + quote(id) + "}");
            System.out.flush();
            String out;
            try {
                Instances train = load(job[3]);
                Instances test = new Instances(load(job[4]));
                test.setClassIndex(test.numAttributes() - 1);
                if (!train.equalHeaders(test)) throw new IllegalArgumentException(train.equalHeadersMsg(test));
                double[] warm = once(job[1], job[2], train, test);
                List<Double> build = new ArrayList<>(), testMs = new ArrayList<>();
                if (warm[0] + warm[1] < longMs) {
                    for (int r = 0; r < repeats; r++) {
                        double[] t = once(job[1], job[2], train, test);
                        build.add(t[0]);
                        testMs.add(t[1]);
                    }
                } else {
                    build.add(warm[0]);
                    testMs.add(warm[1]);
                }
                out = "{\"id\":" + quote(id) + ",\"status\":\"ok\",\"acc\":" + (warm[2] / test.numInstances())
                      + ",\"n_test\":" + test.numInstances() + ",\"build_ms\":" + list(build) + ",\"test_ms\":" + list(testMs)
                      + String.format(",\"warm_build_ms\":%.3f,\"warm_test_ms\":%.3f}", warm[0], warm[1]);
            } catch (Throwable e) {  // WEKA refuses data it cannot handle (e.g. SGD on a multi-class set)
                String msg = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).split("\n")[0];
                out = "{\"id\":" + quote(id) + ",\"status\":\"error\",\"reason\":" + quote(msg) + "}";
            }
            System.out.println(out);
            System.out.flush();
        }
    }
}
