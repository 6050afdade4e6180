# For dumped open boxes of ACAS Xu prop_2 (open33_worst.csv): CROWN conjunction bound, the LP over the triangle
# relaxation with CROWN layer bounds of min max_k g_k, and the exact MILP value (session 10, issue 7).
# /usr/bin/python3 lpbox.py NET BOXES.csv N [SEARCH]
import sys, time, numpy as np, torch
sys.path.insert(0,__import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix
from acas import *; from crown import *
torch.set_num_threads(1)
net=sys.argv[1]; fwd,sub,layers=load(net)
W0,b0=layers[0]; L=[(W0,b0-W0@sub)]+layers[1:]
C=torch.zeros(4,5,dtype=torch.float64)
for j in range(4): C[j,j+1]=1; C[j,0]=-1   # g_j = Y_j - Y_0 ; unsat: max_j g_j > 0
def model(lo,hi,bounds,integral):
    sizes=[w.shape[0] for w,_ in L[:-1]]
    nv=5+3*sum(sizes)+1
    lb=np.full(nv,-np.inf); ub=np.full(nv,np.inf); integ=np.zeros(nv)
    lb[:5]=lo.numpy(); ub[:5]=hi.numpy()
    rows=[];rl=[];ru=[]; prev,prev_n,at=0,5,5; unst=0
    for k,((w,b),m) in enumerate(zip(L[:-1],sizes)):
        w=w.numpy(); b=b.numpy(); l=bounds[k][0][0].numpy(); u=bounds[k][1][0].numpy()
        iz,ih,idd=at,at+m,at+2*m
        lb[iz:iz+m]=l; ub[iz:iz+m]=u; lb[ih:ih+m]=0; ub[ih:ih+m]=np.maximum(u,0); lb[idd:idd+m]=0; ub[idd:idd+m]=1
        if integral: integ[idd:idd+m]=1
        for i in range(m):
            c={iz+i:1.0}; c.update({prev+j:-w[i,j] for j in range(prev_n)})
            rows.append(c); rl.append(b[i]); ru.append(b[i])
            if l[i]>=0: rows.append({ih+i:1,iz+i:-1}); rl.append(0); ru.append(0); ub[idd+i]=0
            elif u[i]<=0: ub[ih+i]=0; ub[idd+i]=0
            else:
                unst+=1
                rows.append({ih+i:1,iz+i:-1}); rl.append(0); ru.append(np.inf)
                if integral:
                    rows.append({ih+i:1,idd+i:-u[i]}); rl.append(-np.inf); ru.append(0)
                    rows.append({ih+i:1,iz+i:-1,idd+i:-l[i]}); rl.append(-np.inf); ru.append(-l[i])
                else:  # triangle: h <= u (z - l) / (u - l)
                    s=u[i]/(u[i]-l[i]); rows.append({ih+i:1,iz+i:-s}); rl.append(-np.inf); ru.append(-s*l[i])
        prev,prev_n,at=ih,m,at+3*m
    wo,bo=L[-1]; wo=wo.numpy(); bo=bo.numpy(); t=nv-1
    for j in range(1,5):   # t >= Y_j - Y_0
        c={t:-1.0}
        for q in range(prev_n): c[prev+q]=c.get(prev+q,0)+(wo[j,q]-wo[0,q])
        rows.append(c); rl.append(-np.inf); ru.append(-(bo[j]-bo[0]))
    A=lil_matrix((len(rows),nv))
    for r,c in enumerate(rows):
        for j,v in c.items(): A[r,j]=v
    obj=np.zeros(nv); obj[t]=1
    res=milp(obj,constraints=LinearConstraint(A.tocsr(),rl,ru),integrality=integ,bounds=Bounds(lb,ub),options={'time_limit':60})
    return (res.fun if res.fun is not None else float("nan")), unst
rows=[l.strip().split(',') for l in open(sys.argv[2]) if not l.startswith('#')]
rows=[[float(v) for v in r] for r in rows]
import collections; print(collections.Counter(r[0] for r in rows)); SEL=int(sys.argv[4]) if len(sys.argv)>4 else 0; rows=[r for r in rows if r[0]==SEL]
rows.sort(key=lambda r:r[11])
N=int(sys.argv[3])
print('boxes',len(rows),'scores min %.4g'%rows[0][11], 'quantiles',[round(rows[int(q*(len(rows)-1))][11],4) for q in (0.1,0.5,0.9)])
for r in rows[:N]:
    lo=torch.tensor(r[1:6],dtype=torch.float64); hi=torch.tensor(r[6:11],dtype=torch.float64)
    bounds,rel=layer_bounds(L,lo[None],hi[None])
    lb,a=final(L,C,torch.zeros(4,dtype=torch.float64),lo[None],hi[None],bounds,rel)
    cj,_=conj_eg(lb,a,lo[None],hi[None])
    t0=time.time(); lp,unst=model(lo,hi,bounds,False); t1=time.time(); ex,_=model(lo,hi,bounds,True); t2=time.time()
    root=torch.tensor([0.0,0,0,0,0])
    print('score %.4f crown_conj %.4f LP %.5f (%.2fs) MILP %.5f (%.2fs) unstable %d width'%(r[11],cj.item(),lp,t1-t0,ex,t2-t1,unst), ' '.join('%.2e'%(h-l) for l,h in zip(r[1:6],r[6:11])))
